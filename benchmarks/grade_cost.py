"""What grading costs per returned notebook on this machine, and what a class of 5,000 learners x 9
notebooks needs, on one machine or in shards (``--shard i/N``, then ``merge``).

    python benchmarks/grade_cost.py                      # 4 learners x every notebook, 2 workers
    python benchmarks/grade_cost.py --learners 2 --notebooks 02,04 --merge-learners 500

The class is built as in ``grade_speed.py`` (every other learner solved every exercise in their own
cells, the others returned the student copies untouched) and graded with ``grade_class``, two
notebooks at a time, as ``make grade`` does. Figures: the median time of a notebook in its worker
(a kernel started, every cell run, every checker and hidden case called), and the wall-clock time
per notebook of the whole run (what the machine delivers with its workers busy): the estimate for
5,000 x 9 notebooks is the latter times 45,000, in machine-hours of a machine like this one. The
merge is timed too, on made-up shards of ``--merge-learners`` learners (no kernels: the merge
reads grades.json files and writes the class's files). The load average is printed before and
after: on a shared machine other work slows every figure.
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path

from grade_speed import build_class

from attention_kit.check import registry
from attention_kit.grading import FAILED, PASSED, ExerciseGrade, NotebookGrade
from attention_kit.grading.__main__ import grade_class
from attention_kit.grading.class_grades import ClassGrades
from attention_kit.grading.execute import Limits
from attention_kit.grading.output import state_extra, write_class
from attention_kit.grading.settings import DEFAULTS
from attention_kit.grading.shards import Shard, merge_shards, shard_learners
from attention_kit.grading.submissions import Learner

CLASS, NOTEBOOKS = 5000, 9


def _load() -> str:
    return "/".join(f"{x:.1f}" for x in os.getloadavg())


class Clock:
    """A progress stream that notes when each notebook is done (the grader's progress bar writes
    one line per notebook to a stream that is not a terminal)."""

    def __init__(self):
        self.done: list[float] = []

    def write(self, text: str) -> None:
        if text.startswith("grading ["):
            self.done.append(time.perf_counter())

    def flush(self) -> None:
        pass

    def isatty(self) -> bool:
        return False


def made_up_shards(folder: Path, n_learners: int, n_shards: int) -> list[Path]:
    """Shard folders of a made-up class of ``n_learners`` Canvas learners x every notebook, as
    ``--shard i/N`` runs write them (random verdicts, a print per exercise)."""
    rng = random.Random(0)
    info = {f"learner{k}_{10000 + k}": Learner(f"learner{k}", canvas_id=str(10000 + k)) for k in range(n_learners)}
    grades, prints = [], {}
    for key, ln in info.items():
        for nb in registry.NOTEBOOKS:
            source = f"{ln.name}_{ln.canvas_id}_{rng.randrange(10**6)}_{nb.file}"
            grades.append(NotebookGrade(key, nb.number, source, [
                ExerciseGrade(ex_id, ex.title, PASSED if rng.random() < 0.7 else FAILED,
                              "" if rng.random() < 0.7 else "a hint of the checker's")
                for ex_id, ex in nb.numbered()]))
            prints[(key, nb.number)] = {ex_id: f"{rng.randrange(16**8):08x}" for ex_id, _ in nb.numbered()}
    settings = {k: v for k, v in DEFAULTS.items()}
    folders = []
    for i in range(1, n_shards + 1):
        mine = set(shard_learners(info, Shard(i, n_shards)))
        part = ClassGrades(mine, [g for g in grades if g.learner in mine], info=info)
        extra = state_extra({k: p for k, p in prints.items() if k[0] in mine}, {}, Limits())
        extra["shard"] = {"index": i, "count": n_shards, "class_learners": sorted(info)}
        folders.append(folder / f"shard-{i}")
        write_class(part, folders[-1], settings, seed="0", extra=extra)
    return folders


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--learners", type=int, default=4)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--notebooks", default="", help="e.g. 02,04 (default: all)")
    parser.add_argument("--merge-learners", type=int, default=CLASS,
                        help=f"learners of the made-up class whose shards are merged (default {CLASS})")
    parser.add_argument("--merge-shards", type=int, default=20)
    args = parser.parse_args(argv)
    sys.stdout.reconfigure(line_buffering=True)
    wanted = set(args.notebooks.split(",")) if args.notebooks else None
    notebooks = [nb for nb in registry.NOTEBOOKS if wanted is None or nb.number in wanted]
    print(f"grade_cost: {os.cpu_count()} cores, load average (1/5/15 min) {_load()} at the start")
    with tempfile.TemporaryDirectory(prefix="grade-cost-") as tmp:
        tmp = Path(tmp)
        build_class(tmp, args.learners, notebooks)
        n = args.learners * len(notebooks)
        clock = Clock()
        start = time.perf_counter()
        result, _ = grade_class(tmp / "class", tmp / "grades", workers=args.workers, progress_stream=clock)
        wall = time.perf_counter() - start
        load_after = _load()
        each: dict[str, list[float]] = {nb.number: [] for nb in notebooks}
        for g in result.by_key.values():
            each[g.number].append(g.seconds)
        every = [s for v in each.values() for s in v]
        print(f"\n{args.learners} learners x {len(notebooks)} notebooks = {n} notebooks graded, "
              f"{args.workers} at a time; load average {load_after} after")
        print(f"{'notebook':<34} {'median s in its worker':>22}")
        for nb in notebooks:
            print(f"{nb.file:<34} {statistics.median(each[nb.number]):>22.1f}")
        # the machine's rate once its workers are busy: from the first notebook done to the last
        steady = (clock.done[-1] - clock.done[0]) / (n - 1) if n > 1 else wall
        fixed = max(0.0, wall - n * steady)  # a run's own start and end: kernels' specs, the files
        print(f"median of the {len(every)} notebooks: {statistics.median(every):.1f} s in a worker "
              f"(min {min(every):.1f}, max {max(every):.1f}); the run took {wall:.0f} s: "
              f"{steady:.2f} s per notebook with {args.workers} workers busy on {os.cpu_count()} cores, "
              f"and about {fixed:.0f} s of a run's own start and end")

        total = CLASS * NOTEBOOKS
        hours = total * steady / 3600
        print(f"\n{CLASS:,} learners x {NOTEBOOKS} notebooks: {total:,} notebooks x {steady:.2f} s = "
              f"{hours:.1f} machine-hours of a {os.cpu_count()}-core machine like this one "
              f"({hours * (os.cpu_count() or 1):.0f} core-hours), measured here under load {load_after}")
        for k in (1, 10, 25, 50, 100):
            print(f"  in {k:>3} shard(s), one such machine each: {hours / k + fixed / 3600:6.2f} h "
                  "of grading per shard, then the merge")

        folders = made_up_shards(tmp / "made-up", args.merge_learners, args.merge_shards)
        start = time.perf_counter()
        merged, _ = merge_shards(folders, tmp / "merged")
        took = time.perf_counter() - start
        print(f"\nmerge of {args.merge_shards} shards of a made-up class of {len(merged.learners):,} "
              f"learners x {len(registry.NOTEBOOKS)} notebooks ({len(merged.by_key):,} notebooks): "
              f"{took:.1f} s; load average {_load()} after")
    return 0


if __name__ == "__main__":
    sys.exit(main())
