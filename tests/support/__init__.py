"""What the tests, scripts and benchmarks share and the package does not ship: the synthetic profile
writers (XSpace: `xplane_writer`, Kineto traces and DDP jobs: `kineto_writer`), small profiles with
checks run on them (`sim`), the demo's scenarios (`scenarios`), hostile files (`hostile_profile`), the
report digests (`report_digests`) and helpers several test folders use. Scripts put `tests/` on
`sys.path` to import it."""
