"""Models of other libraries as fit/predict models of topiclink's runner: PyKEEN's
knowledge-graph embeddings (:mod:`~topiclink_reproductions.peers.pykeen`) and tomotopy's
sLDA and g-DMR (:mod:`~topiclink_reproductions.peers.tomotopy`)."""
