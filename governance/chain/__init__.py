"""The hash chains of the governance log (docs/decisions/0017-governance-log-hash-chain.md).

Events are appended to one of several chains (a writer keeps to one), each event holding the digest of
the one before it in its chain and its own digest over its canonical content; anchors bind every
chain's head together periodically. ``canonical`` computes digests, ``writes`` appends events and
anchors, ``verify`` walks every chain and anchor and names what is broken.
"""
