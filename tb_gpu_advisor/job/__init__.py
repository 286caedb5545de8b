"""The job layer: what one file says of its rank (`HostDigest`), the ranks and profiling cycles of a
run (`JobAnalysis`, `jobs`), two jobs compared (`diff`), and ranks analysed in worker processes or on a
Dask cluster (`ranks`). See docs/jobs.md."""

from tb_gpu_advisor.job.analysis import JobAnalysis, JobRank, analyse_jobs, jobs
from tb_gpu_advisor.measures.rank import COLLECTIVE_HOST, HostDigest, rank_measures, worker_and_cycle

__all__ = [
    "COLLECTIVE_HOST",
    "HostDigest",
    "JobAnalysis",
    "JobRank",
    "analyse_jobs",
    "jobs",
    "rank_measures",
    "worker_and_cycle",
]
