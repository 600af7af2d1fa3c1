"""Evidence that the methods are correct on models nobody has checked by hand.

- `sbc`: simulation-based calibration (Talts et al. 2018) of every method and kernel of ``infer``
  on four small models of different geometry, with a negative control (`negative_control`) that
  must fail; ranks and tests in `ranks` and `statistics`, the power of the tests in `power`.
- `fuzz`: invariants checked on random programs of the corpus (`identity`: the log-density
  identity of the coordinate maps; `prior`: with no observations every method returns the prior;
  `invariance`: the posterior does not depend on the parameterisation).
- `runner`: independent tasks through Ray (a local cluster by default), each result saved as JSON
  when it finishes, resumable; `report`: RELIABILITY.md and its figures.

This package sits above ``infer`` (it calls ``ar.infer``), like ``benchmark``; nothing below
imports it, and importing it reads no file and starts no Ray.
"""
