"""The ending-the-anomaly experiment has no emulation plan: ``REFUSED`` says why."""

REFUSED = "its bottleneck is a Wi-Fi medium (contention, aggregation), which the emulator's wired links do not model"
