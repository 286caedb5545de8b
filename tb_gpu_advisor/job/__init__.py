"""The job layer: the ranks and profiling cycles of a run (`JobAnalysis`, `jobs`) from each file's rank
digest (measures/rank.py), two jobs compared (`diff`), and ranks analysed in worker processes or on a
Dask cluster (`ranks`). See docs/jobs.md."""

from tb_gpu_advisor.job.analysis import JobAnalysis, JobRank, analyse_jobs, jobs

__all__ = ["JobAnalysis", "JobRank", "analyse_jobs", "jobs"]
