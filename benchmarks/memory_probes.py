"""Peak-memory probes shared by the scale benchmarks (Linux /proc; None elsewhere)."""

from __future__ import annotations

__all__ = ["status_kb", "reset_peak"]


def status_kb(field: str) -> int | None:
    """A ``/proc/self/status`` field in KiB (``VmHWM``, ``VmRSS``), or None."""
    try:
        with open("/proc/self/status") as fh:
            for line in fh:
                if line.startswith(field + ":"):
                    return int(line.split()[1])
    except OSError:
        return None
    return None


def reset_peak() -> bool:
    """Reset the process's peak RSS (``VmHWM``); False where that is not possible."""
    try:
        with open("/proc/self/clear_refs", "w") as fh:
            fh.write("5")
    except OSError:
        return False
    return status_kb("VmHWM") is not None
