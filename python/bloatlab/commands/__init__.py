"""The simulator's ``bloatlab`` commands, one module each; :mod:`bloatlab.cli` adds them
(and the emulator's, validation's and packetdrill's) to the group from one list."""
