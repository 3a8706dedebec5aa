"""The grader's hidden cases (attention_kit.grading.hidden): the teacher's worked solutions pass
them for every learner; an answer that hard-codes the in-class checker's cases (it passes in class)
fails them, and so does a typical wrong answer; the cases differ from the in-class ones and from
learner to learner, and are the same at a regrade."""

from __future__ import annotations

import ast
import copy
import math
import sys
from pathlib import Path

import nbformat
import numpy as np
import pytest

import attention_kit as ak
from attention_kit.check import quietly, registry
from attention_kit.grading import hidden_refs, wire
from attention_kit.grading import hidden_refs_learn as refs
from attention_kit.grading.hidden import HIDDEN, case_rng, check_hidden
from attention_kit.grading.solutions import NOTEBOOK_DIR

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tools"))
import class_samples  # noqa: E402

NUMBERS = ("01", "02", "03", "04", "05", "06", "07", "08")
SEEDS = ((2024, "alice"), (7, "bob"), ("spring-term", "chloé"))
SKIPPED = {"06.3"}  # sampling: a right answer may use the generator in its own way


def _functions(source: str) -> str:
    """Only the function definitions of a cell (no checker call, no notebook-only asserts)."""
    tree = ast.parse(source)
    tree.body = [node for node in tree.body if isinstance(node, (ast.FunctionDef, ast.Import, ast.ImportFrom))]
    return ast.unparse(tree)


def _given_code(number: str) -> str:
    """The notebook's helper functions that a worked solution calls (notebook 02's softmax_given)."""
    nb = nbformat.read(NOTEBOOK_DIR / registry.notebook(number).file, as_version=4)
    return "\n\n".join(_functions(c.source) for c in nb.cells
                       if c.cell_type == "code" and "def softmax_given" in c.source)


def _run(source: str) -> dict:
    namespace = {"np": np, "ak": ak, "math": math}
    exec(compile(source, "<answer>", "exec"), namespace)  # noqa: S102 (the course's own solutions)
    return namespace


_SOLVED: dict[str, tuple[list, dict]] = {}


def _solved():
    """Per exercise id: the worked solution's answers (functions, or the value), in registry order."""
    if not _SOLVED:
        for number in NUMBERS:
            given = _given_code(number)
            for ex_id, src in class_samples.solution_sources(number).items():
                ex = dict(registry.notebook(number).numbered())[ex_id]
                own = class_samples.own_answer(src)
                try:  # the whole answer cell (05.2 also sets `why`)
                    ns = _run(given + "\n\n" + own)
                except Exception:  # it uses the notebook's variables: its functions alone
                    ns = _run(given + "\n\n" + _functions(own))
                _SOLVED[ex_id] = ([ns.get(name) for name in ex.answers], ex)
    return _SOLVED


def _solution(ex_id):
    return _solved()[ex_id]


def _key(value):
    if isinstance(value, np.ndarray):
        return ("array", value.shape, value.dtype.str, value.tobytes())
    if callable(value):
        return ("function",)
    if isinstance(value, (tuple, list)):
        return tuple(_key(v) for v in value)
    return ("value", repr(value))


class _Recorder:
    """A stand-in like the grader's (the checker's plain-numpy test looks no further): it calls
    the worked solution and records each call's inputs and result."""

    used = None
    tampered = False

    def __init__(self, fn):
        self.fn, self.calls = fn, []

    def watch_plain(self, allow):
        pass

    def __call__(self, *args, **kwargs):
        key = (_key(args), _key(sorted(kwargs.items())))
        args_in = copy.deepcopy(args)
        out = self.fn(*args, **kwargs)
        self.calls.append((key, args_in, copy.deepcopy(out)))
        return out


class _HardCoded(_Recorder):
    """The learner who hard-codes the in-class cases: their results for their inputs (so it passes
    in class), and the first one's result for any other input."""

    def __init__(self, calls):
        self.table = {}
        for key, _, out in calls:
            self.table.setdefault(key, out)
        self.first = calls[0][2]

    def __call__(self, *args, **kwargs):
        key = (_key(args), _key(sorted(kwargs.items())))
        return copy.deepcopy(self.table.get(key, self.first))


_PUBLIC: dict[str, list] = {}


def _public_calls(ex_id):
    """Per answer: the calls the in-class checker makes to the worked solution (it passes)."""
    if ex_id not in _PUBLIC:
        answers, ex = _solution(ex_id)
        wrapped = [_Recorder(a) if callable(a) else a for a in answers]
        with quietly():
            assert ex.checker(*wrapped, **ex.kwargs)
        _PUBLIC[ex_id] = [w.calls if isinstance(w, _Recorder) else None for w in wrapped]
    return _PUBLIC[ex_id]


# Notebooks 01-08 here; notebook 09's specs are tested in tests/test_grading_trust.py.
HIDDEN_0108 = {ex_id: specs for ex_id, specs in HIDDEN.items() if ex_id < "09"}
SPECS = [(ex_id, k) for ex_id, specs in HIDDEN_0108.items() for k in range(len(specs))]


def _ids(p):
    return f"{p[0]}-{p[1]}"


def test_every_function_exercise_of_01_to_08_has_hidden_cases():
    want = set()
    for ex_id, (answers, _) in _solved().items():
        for k, a in enumerate(answers):
            if callable(a) and ex_id not in SKIPPED:
                want.add((ex_id, k))
    have = {(ex_id, spec.answer) for ex_id, specs in HIDDEN_0108.items() for spec in specs}
    assert have == want


@pytest.mark.parametrize("spec_id", SPECS, ids=_ids)
@pytest.mark.parametrize("seed,learner", SEEDS)
def test_worked_solution_passes(spec_id, seed, learner):
    ex_id, _ = spec_id
    answers, _ = _solution(ex_id)
    assert check_hidden(ex_id, answers, case_rng(seed, learner, ex_id)) is None


@pytest.mark.parametrize("spec_id", SPECS, ids=_ids)
def test_hard_coded_in_class_answers_fail(spec_id):
    ex_id, k = spec_id
    answers, ex = _solution(ex_id)
    calls = _public_calls(ex_id)[HIDDEN[ex_id][k].answer]
    cheat = list(answers)
    cheat[HIDDEN[ex_id][k].answer] = _HardCoded(calls)
    with quietly():
        assert ex.checker(*cheat, **ex.kwargs), "the hard-coded answer passes in class"
    first = calls[0][2]
    fixed = list(answers)
    fixed[HIDDEN[ex_id][k].answer] = lambda *args, **kwargs: copy.deepcopy(first)
    for seed, learner in SEEDS:
        for answer in (cheat, fixed):
            message = check_hidden(ex_id, answer, case_rng(seed, learner, ex_id))
            assert message is not None and "does your answer depend on the examples" in message


@pytest.mark.parametrize("spec_id", SPECS, ids=_ids)
def test_cases_differ_from_in_class_cases(spec_id):
    ex_id, k = spec_id
    spec = HIDDEN[ex_id][k]
    public = {(key[0]) for key, _, _ in _public_calls(ex_id)[spec.answer]}
    for seed, learner in SEEDS:
        cases = spec.cases(case_rng(seed, learner, ex_id))
        assert 2 <= len(cases) <= 4
        for args in cases:
            assert _key(tuple(args)) not in public


@pytest.mark.parametrize("spec_id", SPECS, ids=_ids)
def test_cases_are_per_learner_and_stable(spec_id):
    ex_id, k = spec_id
    spec = HIDDEN[ex_id][k]
    draw = lambda learner: [_key(tuple(a)) for a in spec.cases(case_rng(11, learner, ex_id))]  # noqa: E731
    assert draw("alice") == draw("alice")
    assert draw("alice") != draw("bob")
    assert [_key(tuple(a)) for a in spec.cases(case_rng(12, "alice", ex_id))] != draw("alice")


@pytest.mark.parametrize("spec_id", SPECS, ids=_ids)
def test_compare_never_raises_on_odd_answers(spec_id):
    ex_id, k = spec_id
    spec = HIDDEN[ex_id][k]
    args = spec.cases(case_rng(1, "x", ex_id))[0]
    expected = spec.reference(*args)
    for junk in (None, "text", [[1.0, 2.0], [3.0]], (1, 2, 3), wire.Opaque("Foo"), object(), np.nan, True):
        assert spec.compare(junk, expected) is False


# A typical mistake per answer (the in-class checker names most of them); each must fail here too.
WRONG = {
    ("01.2", 0): "def f(q, K):\n    return (K * q).sum()",
    ("01.4", 0): "def f(a, V):\n    return V.mean(axis=0)",
    ("01.5", 0): "def f(C, W_c, b_c):\n    return ak.softmax(C @ W_c.T)",  # the bias forgotten
    # axis 1 is a row of one matrix, and the queries' axis of a stack (h, n_q, n_k)
    ("02.1", 0): "def f(S):\n    e = np.exp(S - S.max(axis=1, keepdims=True))\n"
                 "    return e / e.sum(axis=1, keepdims=True)",
    ("02.2", 0): "def f(Q, K):\n    return Q @ K.T / 3.0",  # sqrt(9) of the first in-class d_k (its d_k = 4 fails it)
    # sqrt(3) of the in-class d_k: passes in class
    ("02.5", 0): "def f(X, W_q, W_k, W_v):\n    K_T = np.swapaxes(X @ W_k, -1, -2)\n"
                 "    return ak.softmax(X @ W_q @ K_T / np.sqrt(3)) @ (X @ W_v)",
    ("02.6", 0): "def f(X, W_q, W_k, W_v):\n    return ak.self_attention(X, W_q.T, W_k.T, W_v.T)[0]",
    ("03.1", 0): "def f(X, h):\n    b, n, hd = X.shape\n    return X.reshape(b, h, n, hd // h)",
    ("03.1", 1): "def f(Xh):\n    b, h, n, d = Xh.shape\n    return Xh.reshape(b, n, h * d)",
    ("03.2", 0): "def f(X, W_q, W_k, W_v):\n    Q, K, V = X @ W_q, X @ W_k, X @ W_v\n"
                 "    return ak.softmax(Q @ K.T / np.sqrt(K.shape[1]), axis=0) @ V",
    ("03.3", 0): "def f(heads, W_o):\n    b, h, n, d = heads.shape\n    return heads.reshape(b, n, h * d) @ W_o",
    ("04.1", 0): "def f(n):\n    return np.tril(np.ones((n, n)))",  # floats, not bools
    ("04.2", 0): "def f(S, mask):\n    return ak.softmax(S) * mask",
    ("04.3", 0): "def f(pos, d):\n    return ak.sinusoidal_positions(len(pos), d)",  # the positions ignored
    ("05.1", 0): "def f(Q, K, W, dS):\n    return dS @ K @ W, dS.T @ Q @ W",
    ("05.2", 0): "def f(Q, K, dS):\n    d = Q.shape[1]\n    return (dS @ K).sum(axis=0) / np.sqrt(d), np.zeros(d)",
    ("05.3", 0): "def f(fn, x, analytic, eps=1e-4):\n    num = np.zeros_like(x)\n"
                 "    for i in np.ndindex(x.shape):\n        up = x.copy()\n        up[i] += eps\n"
                 "        num[i] = (fn(up) - fn(x)) / eps\n"
                 "    return np.linalg.norm(analytic - num) / (np.linalg.norm(analytic) + np.linalg.norm(num))",
    # section 2's row loop: on a batch a row is a whole sequence
    ("06.1", 0): "def f(X, gamma, beta, eps=1e-5):\n    out = np.empty(X.shape)\n"
                 "    for i, x in enumerate(X):\n        out[i] = gamma * (x - x.mean()) / np.sqrt(x.var() + eps) + beta\n"
                 "    return out",
    # section 3's unnormalised accumulator
    ("07.1", 0): "def f(m, l, o, s, V):\n    m_new = max(m, s.max())\n    a = np.exp(m - m_new)\n"
                 "    p = np.exp(s - m_new)\n    return m_new, a * l + p.sum(), a * o + p @ V",
    ("07.2", 0): "def f(n, bq, bk):\n    return sum(1 for i in range(n // bq) for j in range(n // bk)"
                 " if j * bk > (i + 1) * bq - 1)",
    ("07.3", 0): "def f(n, L, H, Hkv, d, b):\n    return 2 * n * L * H * d * b",  # the query heads
    ("08.1", 0): "def f(w, ids):\n    m = ak.heads.diagnostics.prefix_match_mask(ids)[0]\n"
                 "    return float((w * m).sum(axis=1).mean())",
    ("08.3", 0): "def f(n, window, sinks):\n    return ak.sliding_window_mask(n, window)",
}


def test_every_spec_has_a_wrong_answer():
    assert set(WRONG) == set((ex_id, spec.answer) for ex_id, specs in HIDDEN_0108.items() for spec in specs)


@pytest.mark.parametrize("spec_id", SPECS, ids=_ids)
def test_typical_wrong_answer_fails(spec_id):
    ex_id, k = spec_id
    spec = HIDDEN[ex_id][k]
    answers, _ = _solution(ex_id)
    wrong = list(answers)
    wrong[spec.answer] = _run(WRONG[ex_id, spec.answer])["f"]
    for seed, learner in SEEDS:
        assert check_hidden(ex_id, wrong, case_rng(seed, learner, ex_id)) is not None


def test_a_raising_answer_gets_a_message_with_the_shapes():
    answers, _ = _solution("02.2")
    msg = check_hidden("02.2", [lambda Q, K: Q @ K], case_rng(1, "x", "02.2"))
    assert msg is not None and "raised ValueError" in msg and "(" in msg
    assert check_hidden("02.2", answers, case_rng(1, "x", "02.2")) is None


def test_gradient_check_functions_cross_to_the_kernel_by_name():
    for f in (refs.grad_wavy, refs.grad_quartic, refs.grad_big, refs.grad_exp):
        data = wire.encode(f)
        assert data == {"function": ["attention_kit.grading.hidden_refs_learn", f.__name__]}
        assert wire.decode(data, allow_functions=True) is f


def test_kv_cases_go_past_4096_tokens():
    """A sliding window's cap typed into a full cache (learner trial, issue 46) fails for every seed."""
    def capped(n, L, H, Hkv, d, b):
        return 2 * min(n, 4096) * L * Hkv * d * b

    for seed in range(40):
        rng = case_rng(seed, "x", "07.3")
        assert max(c[0] for c in refs.kv_cases(rng)) > 4096, seed
        assert check_hidden("07.3", [capped], case_rng(seed, "x", "07.3")) is not None, seed


def test_gradient_cases_are_in_the_checkers_bands():
    """A right check gives <= 1e-6 on the two right gradients and 1 on the wrong one (three times
    too large and of the wrong sign: an unbounded |a - n| / |a + n| gives 2); an absolute
    error (what the in-class checker's 1e-9 and 1e6 cases catch) is refused."""
    for seed in range(20):
        cases = refs.gradient_cases(case_rng(seed, "x", "05.3"))
        errs = [refs.gradient_ref(*c) for c in cases]
        assert errs[0] < 1e-7 and errs[2] < 1e-7 and abs(errs[1] - 1.0) < 1e-6
        assert 1e-4 < errs[3] < 1e-2 and cases[3][3] != cases[0][3]  # a second, large eps
        for (f, x, analytic, eps), err in zip(cases[1:3], errs[1:3], strict=True):
            numeric = np.array([(f(x + eps * e) - f(x - eps * e)) / (2 * eps)
                                for e in np.eye(x.size).reshape(x.size, *x.shape)]).reshape(x.shape)
            assert not refs.gradient_ok(float(np.abs(analytic - numeric).max()), err)
            assert not refs.gradient_ok(float(np.linalg.norm(analytic - numeric)), err)


def test_gradient_check_with_a_step_of_its_own_fails():
    """A check that ignores the eps it is passed (learner trial, issue 46) fails the large-eps case."""
    def own_step(f, x, analytic, eps=1e-4):
        num = np.zeros_like(x)
        for i in np.ndindex(x.shape):
            up, down = x.copy(), x.copy()
            up[i] += 1e-5
            down[i] -= 1e-5
            num[i] = (f(up) - f(down)) / 2e-5
        return np.linalg.norm(analytic - num) / (np.linalg.norm(analytic) + np.linalg.norm(num))

    for seed in range(10):
        assert check_hidden("05.3", [own_step], case_rng(seed, "x", "05.3")) is not None, seed


def test_gradient_error_against_one_gradient_fails():
    """An error measured against one gradient alone passed the old band 0.1 .. 1 (learner trial,
    05.3): the hidden cases now want the relative error itself for the wrong gradient."""
    for seed in range(10):
        cases = refs.gradient_cases(case_rng(seed, "x", "05.3"))
        f, x, analytic, eps = cases[1]
        numeric = np.array([(f(x + eps * e) - f(x - eps * e)) / (2 * eps)
                            for e in np.eye(x.size).reshape(x.size, *x.shape)]).reshape(x.shape)
        diff = float(np.linalg.norm(analytic - numeric))
        assert refs.gradient_ok(diff / (np.linalg.norm(analytic) + np.linalg.norm(numeric)),
                                refs.gradient_ref(*cases[1]))
        for den in (np.linalg.norm(analytic), np.linalg.norm(numeric)):
            assert not refs.gradient_ok(diff / den, refs.gradient_ref(*cases[1]))


def test_masked_softmax_cases_need_the_allowed_maximum():
    """The third case's first row: its largest score is masked, so subtracting the whole row's
    maximum makes every allowed weight 0 (then 0/0)."""
    for seed in range(10):
        S, mask = hidden_refs.masked_cases(case_rng(seed, "x", "04.2"))[2]
        assert S[0][~mask[0]].max() == 1000.0 and np.all(np.exp(S[0][mask[0]] - S[0].max()) == 0)
        _, m2 = hidden_refs.masked_cases(case_rng(seed, "x", "04.2"))[1]
        assert (~m2).all(axis=1).any()


def test_a_table_of_small_masks_is_not_an_answer():
    """A lookup of the causal masks (and sink masks) for n = 1..13 passes every case a notebook
    could show, never the hidden ones: those sizes go beyond any table worth typing out."""
    table = {n: np.tril(np.ones((n, n), dtype=bool)) for n in range(1, 14)}
    sinks = {(n, w, k): ak.sliding_window_mask(n, w, sinks=k)
             for n in range(1, 14) for w in range(1, n + 1) for k in range(0, 4)}
    for seed in range(20):
        assert check_hidden("04.1", [lambda n: table[n]], case_rng(seed, "x", "04.1")) is not None
        assert check_hidden("08.3", [lambda n, w, k: sinks[(n, w, k)]], case_rng(seed, "x", "08.3")) is not None
        sizes = [n for (n,) in hidden_refs.mask_cases(case_rng(seed, "x", "04.1"))]
        assert max(sizes) > 13 and max(sizes) <= 60 and min(sizes) <= 13
    right = [lambda n: np.tril(np.ones((n, n), dtype=bool))]
    assert all(check_hidden("04.1", right, case_rng(seed, "x", "04.1")) is None for seed in range(20))


def test_online_cases_rise_then_not():
    for seed in range(10):
        (m0, *_), (m1, _, _, s1, _), (m2, _, _, s2, _) = refs.online_cases(case_rng(seed, "x", "07.1"))
        assert m0 == -math.inf and s1.max() > m1 and s2.max() < m2


# Right answers written otherwise than the worked solution (loops, other formulas, numpy ints): the
# in-class checker accepts them, and so must the hidden cases.
OTHER_RIGHT = {
    ("01.2", 0): "def f(q, K):\n    return np.array([float(k @ q) for k in K])",
    ("01.5", 0): "def f(C, W_c, b_c):\n    Z = np.einsum('yv,nv->ny', W_c, C) + b_c\n"
                 "    E = np.exp(Z - Z.max(axis=1, keepdims=True))\n    return E / E.sum(axis=1, keepdims=True)",
    ("02.1", 0): "def f(S):\n    e = np.exp(S - np.max(S, axis=-1, keepdims=True))\n"
                 "    return e / np.sum(e, axis=-1, keepdims=True)",
    ("02.5", 0): "def f(X, W_q, W_k, W_v):\n    Q = np.einsum('...nd,dk->...nk', X, W_q)\n"
                 "    K = np.einsum('...nd,dk->...nk', X, W_k)\n"
                 "    S = np.einsum('...ik,...jk->...ij', Q, K) / np.sqrt(Q.shape[-1])\n"
                 "    return ak.softmax(S) @ (X @ W_v)",
    ("03.1", 0): "def f(X, h):\n    return np.stack(np.split(X, h, axis=-1), axis=1)",
    ("03.1", 1): "def f(Xh):\n    return np.concatenate([Xh[:, i] for i in range(Xh.shape[1])], axis=-1)",
    ("03.3", 0): "def f(heads, W_o):\n    b, h, n, d = heads.shape\n"
                 "    return np.swapaxes(heads, 1, 2).reshape(b, n, h * d) @ W_o",
    ("04.1", 0): "def f(n):\n    return np.array([[j <= i for j in range(n)] for i in range(n)])",
    ("04.2", 0): "def f(S, mask):\n    out = np.zeros(S.shape)\n    for i in range(S.shape[0]):\n"
                 "        if mask[i].any():\n            s = S[i][mask[i]]\n            e = np.exp(s - s.max())\n"
                 "            out[i][mask[i]] = e / e.sum()\n    return out",
    ("05.1", 0): "def f(Q, K, W, dS):\n    return [dS @ (K @ W.T), (dS.T @ Q) @ W]",
    ("05.3", 0): "def f(fn, x, analytic, eps=1e-4):\n    num = np.zeros_like(x)\n"
                 "    for i in np.ndindex(x.shape):\n        up, down = x.copy(), x.copy()\n"
                 "        up[i] += eps\n        down[i] -= eps\n        num[i] = (fn(up) - fn(down)) / (2 * eps)\n"
                 "    return float(np.max(np.abs(analytic - num) / (np.abs(analytic) + np.abs(num))))",
    ("04.3", 0): "def f(pos, d):\n    i = np.arange(d // 2)\n"
                 "    ang = np.outer(pos, 1 / 10000 ** (2 * i / d))\n"
                 "    return np.stack([np.sin(ang), np.cos(ang)], axis=-1).reshape(len(pos), d)",
    ("06.1", 0): "def f(X, gamma, beta, eps=1e-5):\n    Z = X - X.mean(axis=-1, keepdims=True)\n"
                 "    return gamma * Z / np.sqrt((Z ** 2).mean(axis=-1, keepdims=True) + eps) + beta",
    ("07.1", 0): "def f(m, l, o, s, V):\n    m_new = float(np.max([m, *s]))\n    a = np.exp(m - m_new)\n"
                 "    p = np.exp(s - m_new)\n    l_new = a * l + p.sum()\n"
                 "    return [m_new, l_new, a * (l / l_new) * o + V.T @ (p / l_new)]",
    ("07.2", 0): "def f(n, bq, bk):\n    T = -(-n // bk)\n"
                 "    return sum(T - min(T, -(-min(r + bq, n) // bk)) for r in range(0, n, bq))",
    ("07.3", 0): "def f(n, L, H, Hkv, d, b):\n    return np.prod([2, n, L, Hkv, d, b])",  # a numpy int
    ("08.1", 0): "def f(w, ids):\n    sums = []\n    for i in range(len(ids)):\n"
                 "        js = [j for j in range(1, i) if ids[j - 1] == ids[i]]\n"
                 "        if js:\n            sums.append(sum(w[i, j] for j in js))\n    return sum(sums) / len(sums)",
    ("08.3", 0): "def f(n, window, sinks):\n    return np.array([[j <= i and (i - j < window or j < sinks)"
                 " for j in range(n)] for i in range(n)])",
}


@pytest.mark.parametrize("key", sorted(OTHER_RIGHT), ids=lambda k: f"{k[0]}-{k[1]}")
def test_other_right_answers_pass_in_class_and_hidden(key):
    ex_id, k = key
    answers, ex = _solution(ex_id)
    other = list(answers)
    other[k] = _run(OTHER_RIGHT[key])["f"]
    with quietly():
        assert ex.checker(*other, **ex.kwargs)
    for seed, learner in SEEDS:
        assert check_hidden(ex_id, other, case_rng(seed, learner, ex_id)) is None


# Forms the redesigned exercises no longer accept (a list where an array is asked, a float count):
# the in-class checker refuses them, and so do the hidden cases.
REFUSED = {
    ("01.2", 0): "def f(q, K):\n    return [float(k @ q) for k in K]",
    ("02.1", 0): "def f(S):\n    e = np.exp(S - S.max(axis=-1, keepdims=True))\n"
                 "    return (e / e.sum(axis=-1, keepdims=True)).tolist()",
    ("03.2", 0): "def f(X, W_q, W_k, W_v):\n    Q, K, V = X @ W_q, X @ W_k, X @ W_v\n"
                 "    A = ak.softmax(Q @ K.T / np.sqrt(K.shape[1]))\n    return A @ V, A",
    ("04.1", 0): "def f(n):\n    return [[j <= i for j in range(n)] for i in range(n)]",
    ("06.1", 0): "def f(X, gamma, beta, eps=1e-5):\n    mu = X.mean(-1, keepdims=True)\n"
                 "    return list(gamma * (X - mu) / np.sqrt(X.var(-1, keepdims=True) + eps) + beta)",
    ("07.2", 0): "def f(n, bq, bk):\n    T = -(-n // bk)\n"
                 "    return float(sum(T - min(T, -(-min(r + bq, n) // bk)) for r in range(0, n, bq)))",
    ("07.3", 0): "def f(n, L, H, Hkv, d, b):\n    return 2.0 * n * L * Hkv * d * b",
}


@pytest.mark.parametrize("key", sorted(REFUSED), ids=lambda k: f"{k[0]}-{k[1]}")
def test_refused_forms_fail_in_class_and_hidden(key):
    ex_id, k = key
    answers, ex = _solution(ex_id)
    other = list(answers)
    other[k] = _run(REFUSED[key])["f"]
    with quietly():
        assert not ex.checker(*other, **ex.kwargs)
    for seed, learner in SEEDS:
        assert check_hidden(ex_id, other, case_rng(seed, learner, ex_id)) is not None


def test_hidden_cases_catch_a_shift_that_overflows_and_an_unbounded_error():
    """Trial report, G3: a softmax shifted by the row's minimum (02.1, 04.2) and the error
    |a - n| / |a + n| (05.3) passed the hidden cases for every learner."""
    def rows_min(S):
        e = np.exp(S - S.min(axis=-1, keepdims=True))
        return e / e.sum(axis=-1, keepdims=True)

    def rows_mean(S):
        e = np.exp(S - S.mean(axis=-1, keepdims=True))
        return e / e.sum(axis=-1, keepdims=True)

    def masked_min(S, mask):
        lo = np.min(np.where(mask, S, np.inf), axis=1, keepdims=True)
        lo = np.where(np.isfinite(lo), lo, 0.0)
        e = np.where(mask, np.exp(np.where(mask, S, lo) - lo), 0.0)
        t = e.sum(axis=1, keepdims=True)
        return e / np.where(t == 0, 1.0, t)

    def unbounded(f, x, analytic, eps=1e-4):
        n = np.array([(f(x + eps * e) - f(x - eps * e)) / (2 * eps)
                      for e in np.eye(x.size).reshape(x.size, *x.shape)]).reshape(x.shape)
        return float(np.linalg.norm(analytic - n) / np.linalg.norm(analytic + n))

    for seed, learner in SEEDS:
        with np.errstate(all="ignore"):
            for ex_id, fn in (("02.1", rows_min), ("02.1", rows_mean), ("04.2", masked_min), ("05.3", unbounded)):
                assert check_hidden(ex_id, [fn], case_rng(seed, learner, ex_id)) is not None, (ex_id, fn.__name__)
