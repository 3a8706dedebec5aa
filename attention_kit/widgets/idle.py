"""Work the explorers do in the kernel's idle time (preparing the figures a menu will ask for), in
small steps that never hold a press up for long.

The kernel runs one thing at a time: a press that arrives while it prepares a figure waits until
that work ends. So idle work is a generator, one small step per ``next()`` (a scene's build, its
layout, one artist of its background, its PNG), and :class:`IdleWork` runs steps for up to a
few milliseconds per turn of the event loop, turns a little apart, and only after the controls
have been still for ``QUIET`` seconds:
a press is handled between two steps, never after a whole preparation, and the steps after it wait
until the learner pauses again (issue 36).
"""

from __future__ import annotations

import time
from collections import deque

__all__ = ["IdleWork", "IDLE"]


class IdleWork:
    """A queue of generators run one step at a time in the kernel's idle time.

    Parameters
    ----------
    quiet : float
        Seconds since the last press (:meth:`pressed`) before a step may run.
    gap : float
        Seconds between two turns: a message that arrived meanwhile is handled first.
    clock : callable
        The clock (``time.monotonic``); tests pass their own.
    budget : float
        Seconds of steps one turn may run: steps run one after another until they have taken
        this long (0: one step per turn). A press waits for at most the budget and one step; the
        preparation is not stretched by a gap after every tiny step (one artist of a panel).
    timer : callable
        The clock the budget is measured by (``time.perf_counter``); tests pass their own.
    """

    def __init__(self, quiet: float = 0.3, gap: float = 0.01, clock=time.monotonic,
                 budget: float = 0.008, timer=time.perf_counter):
        self.quiet, self.gap, self.clock = quiet, gap, clock
        self.budget, self.timer = budget, timer
        self._jobs: deque = deque()
        self._owners: dict = {}  # id(owner) -> its job still queued (add_once)
        self._loop = None
        self._timer = None
        self._last_press = float("-inf")
        #: steps run so far (all jobs)
        self.steps = 0

    def pressed(self) -> None:
        """A control changed: the next step waits until the controls have been still for
        ``quiet`` seconds."""
        self._last_press = self.clock()

    def add(self, job, loop=None) -> None:
        """Queue ``job`` (a generator); its steps run on ``loop`` (asyncio), or not at all without
        one (a script, nbval: :meth:`run_all` runs them)."""
        self._jobs.append(job)
        if loop is not None:
            self._loop = loop
            self._schedule(self.quiet)

    def add_once(self, owner, make, loop=None) -> bool:
        """Queue ``make()`` (a generator) for ``owner`` unless a job of ``owner``'s is still
        queued; True when queued. An explorer queues its preparation when it is shown and again
        after a press showed another scene (05's new number of heads: the other tasks' scenes
        for it), one at a time."""
        if id(owner) in self._owners:
            return False
        job = make()
        self._owners[id(owner)] = job
        self.add(job, loop)
        return True

    def _done(self, job) -> None:
        self._jobs.popleft()
        for key in [k for k, j in self._owners.items() if j is job]:
            del self._owners[key]

    @property
    def pending(self) -> int:
        """Jobs not finished."""
        return len(self._jobs)

    def _schedule(self, delay: float) -> None:
        if self._loop is None or self._timer is not None or not self._jobs:
            return
        try:
            self._timer = self._loop.call_later(max(delay, 0.0), self._turn)
        except RuntimeError:  # the loop is closed
            self._timer = None

    def _turn(self) -> None:
        self._timer = None
        wait = self._last_press + self.quiet - self.clock()
        if wait > 0:  # a press came since the last step: wait for a pause
            self._schedule(wait)
            return
        start = self.timer()
        while self.step() and self.timer() - start < self.budget:
            pass  # small steps (one artist of a panel) run together up to the budget
        self._schedule(self.gap)

    def step(self) -> bool:
        """Run one step of the first job; False when there was nothing to do."""
        while self._jobs:
            job = self._jobs[0]
            try:
                next(job)
            except StopIteration:
                self._done(job)
                continue
            except Exception:  # noqa: BLE001 (a preparation that fails only costs the speed-up)
                self._done(job)
                continue
            self.steps += 1
            return True
        return False

    def run_all(self) -> int:
        """Run every queued step now (scripts and tests); returns how many ran."""
        n = 0
        while self.step():
            n += 1
        return n


#: The kernel's one queue of idle work (every explorer of a notebook shares the kernel).
IDLE = IdleWork()
