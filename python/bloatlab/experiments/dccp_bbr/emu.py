"""The dccp-bbr experiment has no emulation plan: ``REFUSED`` says why (``bloatlab reproduce
dccp-bbr --engine emulate`` prints it; ``all`` lists it in not-emulated.md)."""

REFUSED = "its flows are DCCP, which Linux removed (kernel 6.16)"
