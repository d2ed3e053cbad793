"""Write ``src/topiclink/datasets/bundled/sources.json``, the registry of sources, from the
lab's copies of the data sets (their ``README.md`` name the sources and commits recorded
below): sizes, sha256 and archive-member digests are computed from the bytes.

    python scripts/make_sources.py DATA_HOME
"""

import argparse
import hashlib
import json
import os
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
_args = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
_args.add_argument("root", type=Path, help="the data home holding every data set")
ROOT = _args.parse_args().root


def sha(p: Path) -> str:
    h = hashlib.sha256()
    with open(p, "rb") as f:
        for b in iter(lambda: f.read(1 << 20), b""):
            h.update(b)
    return h.hexdigest()


GH = "https://raw.githubusercontent.com"
LDA = f"{GH}/cran/lda/9a32665454fe40e098defb17bcfafbf5c8d71288/data"
CONVE = f"{GH}/TimDettmers/ConvE/f3c0eb286025410fa5b4c04696c918264163d0ca"
LDA_LIC = "LGPL (>= 2.1) (CRAN package lda 1.5.2; no separate data licence)"
LDA_NOTE = (
    "CRAN package lda 1.5.2 (J. Chang), data/*.rda, from cran/lda, the read-only GitHub "
    "mirror of CRAN, at commit 9a32665454fe40e098defb17bcfafbf5c8d71288; byte-for-byte"
)
CONVE_NOTE = (
    "the ConvE authors' distribution (TimDettmers/ConvE at commit "
    "f3c0eb286025410fa5b4c04696c918264163d0ca); the split files are the members of the archive, "
    "extracted unchanged and verified member by member"
)
CONVE_LIC = "ConvE repository MIT (code); no separate data licence stated"


def direct(url):
    return [{"url": url}]


D = {}


def add(name, licence, citation, note, files):
    out = []
    for f in files:
        p = ROOT / name / f["name"]
        e = {"name": f["name"], "size": p.stat().st_size, "sha256": sha(p)}
        for k in ("optional", "members"):
            if k in f:
                e[k] = f[k]
        e["sources"] = f["sources"]
        out.append(e)
    D[name] = {"licence": licence, "citation": citation, "note": note, "files": out}


LINQS_CORA = "https://linqs-data.soe.ucsc.edu/public/lbc/cora.tgz"
GAT_ZIP = (
    f"{GH}/paologentleman/Graph-Attention-Networks/"
    "af71700de635b274b7e1625854a5f5207e875eb5/data/cora.zip"
)
add(
    "cora-linqs",
    "none stated (LINQS research data)",
    "McCallum et al., Automating the construction of internet portals with machine learning, "
    "Information Retrieval 2000; Sen et al., Collective classification in network data, AI "
    "Magazine 2008",
    "members of the LINQS cora.tgz (cora/cora.content, cora/cora.cites, cora/README); the copy "
    "here came "
    "from the zip of paologentleman/Graph-Attention-Networks at commit "
    "af71700de635b274b7e1625854a5f5207e875eb5 "
    "(same members, 2007 timestamps); the archives are not kept: their members are verified",
    [
        {
            "name": n,
            "sources": [
                {"url": LINQS_CORA, "member": f"cora/{n}"},
                {"url": GAT_ZIP, "member": f"cora/{n}"},
            ],
        }
        for n in ("cora.content", "cora.cites", "README")
    ],
)
WEBKB = f"{GH}/gaseln/KAUST_CS340_GraphProject/3a21e97a7b43e03993ffaa6522f01452fbca7058/data/WebKB"
add(
    "webkb-linqs",
    "none stated (LINQS research data)",
    "Craven et al., Learning to extract symbolic knowledge from the World Wide Web, AAAI 1998; "
    "Sen et al., AI Magazine 2008",
    "the files of the LINQS WebKB.tgz as kept by gaseln/KAUST_CS340_GraphProject (data/WebKB/) at "
    "commit "
    "3a21e97a7b43e03993ffaa6522f01452fbca7058; byte-for-byte",
    [
        {"name": f"{u}.{e}", "sources": direct(f"{WEBKB}/{u}.{e}")}
        for u in ("cornell", "texas", "washington", "wisconsin")
        for e in ("content", "cites")
    ]
    + [{"name": "README", "sources": direct(f"{WEBKB}/README")}],
)
add(
    "cora-rlda",
    LDA_LIC,
    "McCallum et al., Information Retrieval 2000; Chang, lda: Collapsed Gibbs sampling methods for "
    "topic models, R package 1.5.2",
    LDA_NOTE,
    [
        {"name": n, "sources": direct(f"{LDA}/{n}")}
        for n in ("cora.documents.rda", "cora.vocab.rda", "cora.titles.rda", "cora.cites.rda")
    ],
)
add(
    "poliblog-rlda",
    LDA_LIC,
    "Blei & McAuliffe, Supervised topic models, NIPS 2008; Chang, lda R package 1.5.2",
    LDA_NOTE,
    [
        {"name": n, "sources": direct(f"{LDA}/{n}")}
        for n in ("poliblog.documents.rda", "poliblog.vocab.rda", "poliblog.ratings.rda")
    ],
)
add(
    "sampson-rlda",
    LDA_LIC,
    "Sampson, A novitiate in a period of change, PhD thesis, Cornell 1968; Chang, lda R package "
    "1.5.2",
    LDA_NOTE,
    [{"name": "sampson.rda", "sources": direct(f"{LDA}/sampson.rda")}],
)
NEWS_RDA = (
    "newsgroup.train.documents.rda",
    "newsgroup.test.documents.rda",
    "newsgroup.train.labels.rda",
    "newsgroup.test.labels.rda",
    "newsgroup.vocab.rda",
    "newsgroup.label.map.rda",
)
add(
    "20newsgroups",
    "none stated (distributed for research use); word counts: LGPL (>= 2.1) of the lda package",
    "Lang, NewsWeeder: learning to filter netnews, ICML 1995 (20news-bydate of J. Rennie)",
    "word counts: "
    + LDA_NOTE
    + ". 20news-bydate.tar.gz (optional, load_dataset(..., form='raw')): the "
    "official archive of J. Rennie's page, verified by its members (file names and contents); the "
    "copy here "
    "is a repack of the 18,846 message files of julenminer/mlnn_P65 at commit "
    "7393be663c8dd63e64c8264476494e62edf05c6e, whose contents were not compared with the official "
    "archive",
    [{"name": n, "sources": direct(f"{LDA}/{n}")} for n in NEWS_RDA]
    + [
        {
            "name": "20news-bydate.tar.gz",
            "optional": True,
            "members": True,
            "sources": direct("http://qwone.com/~jason/20Newsgroups/20news-bydate.tar.gz"),
        }
    ],
)
SOTU = f"{GH}/cran/sotu/c7185b0db7c3efb4106ff27f44108d78d231f540/data"
add(
    "sotu",
    "public domain (US government works); package GPL-2",
    "Arnold, sotu: United States Presidential State of the Union Addresses, R package 1.0.4 (CRAN "
    "2022); "
    "texts of The American Presidency Project",
    "CRAN package sotu 1.0.4, data/*.rda, from cran/sotu (read-only GitHub mirror of CRAN) at "
    "commit "
    "c7185b0db7c3efb4106ff27f44108d78d231f540; byte-for-byte",
    [{"name": n, "sources": direct(f"{SOTU}/{n}")} for n in ("sotu_text.rda", "sotu_meta.rda")],
)
add(
    "hepth",
    "none stated (arXiv metadata)",
    "Gehrke, Ginsparg & Kleinberg, Overview of the 2003 KDD Cup, SIGKDD Explorations 2003; "
    "Leskovec, "
    "Kleinberg & Faloutsos, KDD 2005 (SNAP cit-HepTh); Tan, Chan & Zheng 2016 (LMV benchmark)",
    "cit-HepTh.txt.gz: SNAP's own archive (gzip header: Cit-HepTh.txt, 2009), also kept by "
    "RakshithaKarnam24/wexa-cognodb-benchmark at commit 9636ea019ce7f5e0837460e87dee4682a10d7b36. "
    "cit-HepTh-abstracts.tar.gz: the copy here is a repack (sorted names, owner 0, gzip -n -9) of "
    "the 29,555 "
    ".abs files of luc6987/Modal_INF473G at commit af10c26e6197205f9b590eb1e819a2b5dae918c4, so "
    "SNAP's archive "
    "is verified by its members (names YYYY/ID.abs and contents), not by its bytes",
    [
        {
            "name": "cit-HepTh-abstracts.tar.gz",
            "members": True,
            "sources": direct("https://snap.stanford.edu/data/cit-HepTh-abstracts.tar.gz"),
        },
        {
            "name": "cit-HepTh.txt.gz",
            "sources": direct("https://snap.stanford.edu/data/cit-HepTh.txt.gz")
            + direct(
                f"{GH}/RakshithaKarnam24/wexa-cognodb-benchmark/"
                f"9636ea019ce7f5e0837460e87dee4682a10d7b36/"
                "data/cit-HepTh.txt.gz"
            ),
        },
    ],
)
for name, arch, lic, cit in [
    (
        "nations",
        "nations.tar.gz",
        CONVE_LIC,
        "Rummel, Dimensionality of Nations; Kemp et al., AAAI 2006; Rocktaschel & Riedel, NIPS "
        "2017 "
        "(split); Dettmers et al., ConvE, AAAI 2018",
    ),
    (
        "umls",
        "umls.tar.gz",
        CONVE_LIC + "; UMLS: NLM material",
        "McCray, An upper-level ontology for the biomedical domain, 2003; Kemp et al., AAAI 2006; "
        "Rocktaschel & Riedel, NIPS 2017 (split); Dettmers et al., ConvE, AAAI 2018",
    ),
    (
        "wn18rr",
        "WN18RR.tar.gz",
        CONVE_LIC + "; WordNet licence (Princeton)",
        "Dettmers, Minervini, Stenetorp & Riedel, Convolutional 2D knowledge graph embeddings, "
        "AAAI 2018; Bordes et al., NIPS 2013",
    ),
]:
    add(
        name,
        lic,
        cit,
        CONVE_NOTE,
        [{"name": arch, "sources": direct(f"{CONVE}/{arch}")}]
        + [
            {"name": s, "sources": [{"url": f"{CONVE}/{arch}", "member": s}]}
            for s in ("train.txt", "valid.txt", "test.txt")
        ],
    )
add(
    "fb15k-237",
    CONVE_LIC + "; Freebase CC-BY",
    "Toutanova & Chen, Observed versus latent features for knowledge base and text inference, CVSC "
    "2015; "
    "Bordes et al., NIPS 2013; Dettmers et al., ConvE, AAAI 2018",
    "the ConvE authors' archive (TimDettmers/ConvE at commit "
    "f3c0eb286025410fa5b4c04696c918264163d0ca), "
    "kept as distributed",
    [{"name": "FB15k-237.tar.gz", "sources": direct(f"{CONVE}/FB15k-237.tar.gz")}],
)

from topiclink.datasets.verify import members_digest  # noqa: E402

for name, spec in D.items():
    for f in spec["files"]:
        if f.get("members"):
            n, digest = members_digest(ROOT / name / f["name"])
            f["members"] = {"count": n, "sha256": digest}
from topiclink.datasets import dataset_specs  # noqa: E402

specs = dataset_specs()
D = {n: {"description": specs[n].description, **d} for n, d in D.items()}
cora = specs["cora"]
bundled = {
    "cora": {
        "description": cora.description,
        "file": "cora_rlda.npz",
        "size": (REPO / "src/topiclink/datasets/bundled/cora_rlda.npz").stat().st_size,
        "licence": "LGPL (>= 2.1) (the lda package's data; see bundled/cora_rlda.README.md)",
        "citation": D["cora-rlda"]["citation"],
    }
}
out = REPO / "src/topiclink/datasets/bundled/sources.json"
tmp = out.with_suffix(".tmp")
tmp.write_text(json.dumps({"format": 1, "datasets": D, "bundled": bundled}, indent=1) + "\n")
os.replace(tmp, out)
print("wrote", out, sum(len(s["files"]) for s in D.values()), "files")
