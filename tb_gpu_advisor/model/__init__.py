"""The profile model: the columnar `Profile` the formats build (profile, arrays, intervals, extent),
names classified once for every format (classify), and what is derived once per profile: steps and
their breakdown (steps), the active GPUs and the host table (analysis)."""
