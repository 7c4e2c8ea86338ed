"""marft's PyTorch training engine.

One worker process per device (started through torchrun when there is more than one) serves the
TypeScript controller's Engine interface (src/engine/types.ts): rank 0 reads each command from a Unix
socket (length-prefixed msgpack, framing.py), every rank executes it (worker.py), rank 0 answers.
File formats (PEFT adapters, critics, optimiser state) are written by the TypeScript side, so they are
the embedded engine's byte for byte; tensors travel over the socket.
"""
