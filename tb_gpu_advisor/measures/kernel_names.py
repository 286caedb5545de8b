"""A kernel's short name, as the kernels table shows it (the full name on hover and in exports).

GPU kernels are named by their C++ signature, a mangled symbol or a generated identifier:

- `void cutlass::Kernel2<cutlass_80_tensorop_s1688gemm_128x256_32x3_nt_align1>(...::Params)`: a
  wrapper template; the kernel is its argument, `cutlass_80_tensorop_s1688gemm_128x256_32x3_nt_align1`
  (its `_align1` is what says the GEMM's dimensions were not aligned);
- `void at::native::vectorized_elementwise_kernel<4, at::native::FillFunctor<float>, ...>(...)`: a
  launcher; what it runs is its functor or lambda, `vectorized_elementwise_kernel<FillFunctor>`;
- `void cudnn::bn_bw_1C11_kernel_new<float, float, float2, 128, true, 1>(...)`: templates folded, the
  library kept: `cudnn::bn_bw_1C11_kernel_new`;
- `_ZN17cutlass__5x_cudnn6KernelINS_4conv6kernel23ImplicitGemmConvolution...`: demangled first (the
  names of the Itanium ABI's nested names and template arguments), then as above:
  `ImplicitGemmConvolution`;
- `nvjet_sm90_tst_192x128_64x5_1x2_h_bz_coopB_NNT`, `triton_poi_fused_...`,
  `volta_scudnn_128x64_relu_interior_nn_v1`: already a name, kept whole (the panel cuts a long one in
  its middle, so that the distinctive end stays in view); cuBLAS's and cuDNN's
  `sm90_xmma_gemm_f32f32_tf32f32_f32_nt_n_tilesize128x128x32_warpgroupsize1x1x1_execute_segment_k_off_kernel__5x_cublas`
  without its warp shape, `execute`, `kernel` and library tag:
  `sm90_xmma_gemm_f32f32_tf32f32_f32_nt_n_tilesize128x128x32_segment_k_off`.
"""

from __future__ import annotations

import re

MAX_SHORT = 200
# templates whose kernel is their first argument
WRAPPERS = frozenset({"Kernel", "Kernel2", "kernel", "device_kernel"})
# launchers whose kernel is the functor or lambda among their arguments
LAUNCHER = re.compile(r"elementwise|reduce_kernel|multi_tensor_apply|apply_kernel")
# adapters around the functor that names the work (`BinaryFunctor<float, float, float, MulFunctor<float>>`)
ADAPTERS = frozenset(
    {
        "BinaryFunctor",
        "AUnaryFunctor",
        "BUnaryFunctor",
        "UnaryFunctor",
        "ReduceOp",
        "func_wrapper_t",
        "gpu_kernel_impl",
        "gpu_kernel_impl_nocast",
        "gpu_index_kernel",
    }
)
# template arguments that say how, not what
PLUMBING = re.compile(
    r"^(Array|array|OpaqueType|LoadWithCast|StoreWithCast|LoadWithoutCast|StoreWithoutCast|TensorInfo)$"
    r"|OffsetCalculator$|Metadata$|Policy$|^memory$"
)
# libraries whose namespace says whose kernel it is
LIBRARIES = re.compile(r"^(cudnn|cublas|cublasLt|cutlass|cask|xmma|fbgemm|flash|nccl|cub|thrust)", re.IGNORECASE)
BUILTIN = frozenset(
    """void bool char signed unsigned short int long float double half bfloat16 __half __nv_bfloat16 float2
    float4 int8_t int16_t int32_t int64_t uint8_t uint16_t uint32_t uint64_t size_t Half BFloat16 true false
    const volatile""".split()
)
_OPEN = {"<": ">", "(": ")", "{": "}", "[": "]"}
_CLOSE = {v: k for k, v in _OPEN.items()}


# generated GEMM and convolution names (cuBLAS's and cuDNN's xmma kernels): the parts that say how it
# is built rather than which kernel it is, and a library tag at the end that would hide the distinctive
# end (`_aligna4_alignc8`, `_split_k`) when a long name is cut in its middle
XMMA = re.compile(r"^sm\d+_xmma_")
XMMA_NOISE = re.compile(r"_(warpsize|warpgroupsize)\d+x\d+x\d+|_execute(?=_)|_kernel(?=_|$)|__5x_\w+$")


def short_name(name: str) -> str:
    """The kernel `name` as the kernels table shows it (see the module's docstring)."""
    s = name.strip()
    if s.startswith("_Z"):
        s = demangle(s) or s
    try:
        out = _short(s)
    except ValueError:  # brackets that do not pair: the name as it is, cut
        out = ""
    out = out or s
    if XMMA.match(out):
        out = XMMA_NOISE.sub("", out)
    return out[:MAX_SHORT]


def _short(s: str) -> str:
    s = s.replace("(anonymous namespace)::", "").replace("(anonymous namespace)", "")
    head = _without_parameters(s)
    parts = _split(head, " ")
    qualified = parts[-1] if parts else head
    comps = _split(qualified, "::")
    if not comps:
        return ""
    base, args = _template(comps[-1])
    if base.startswith("operator") and len(comps) > 1:  # a call operator: its class names it
        base, args = _template(comps[-2])
    if base in WRAPPERS and args:
        inner = _named(args[0])
        if inner:
            return _short(args[0])
        if len(comps) > 1:  # `internal::gemvx::kernel<int, ...>`: its namespace names it
            return f"{_template(comps[-2])[0]}::{base}"
    lib = _library(comps)
    if args and LAUNCHER.search(base):
        what = _distinctive(args)
        if what:
            return f"{lib}{base}<{what}>"
    return f"{lib}{base}"


def _library(comps: list[str]) -> str:
    """`cudnn::` where the name's outermost namespace is a library's (cutlass__5x_cudnn is cutlass's)."""
    if len(comps) < 2:
        return ""
    first = _template(comps[0])[0]
    return f"{first.split('__')[0]}::" if LIBRARIES.match(first) else ""


def _distinctive(args: list[str]) -> str:
    """The name of the functor or lambda among a launcher's template arguments ("" when none)."""
    for a in args:
        named = _named(a)
        if not named or PLUMBING.search(named):
            continue
        comps = _split(a, "::")
        lam = next((i for i, c in enumerate(comps) if c.startswith("{lambda")), None)
        if lam is not None:  # `ns::gelu_kernel(at::TensorIteratorBase&)::{lambda()#1}::...`: its function
            fn = comps[:lam]
            if not fn:
                continue
            base, inner = _template(_without_parameters(fn[-1]))
            if base.startswith("operator") and len(fn) > 1:  # `sum_functor<...>::operator()(...)::{lambda...}`
                base, inner = _template(_without_parameters(fn[-2]))
        else:
            base, inner = _template(comps[-1])
        if base in ADAPTERS:
            deeper = _distinctive(inner[::-1])  # the functor is the adapter's last named argument
            if deeper:
                return deeper
            continue
        return base
    return ""


def _named(arg: str) -> str:
    """A template argument's name when it names something (not a number, a builtin type, a cast)."""
    a = arg.strip()
    if not a or a[0] in "(-0123456789!":
        return ""
    base = _template(_split(a, "::")[-1] if "::" in a else a)[0].rstrip("*& ")
    words = base.split()
    if not words or all(w in BUILTIN for w in words):
        return ""
    return base


def _without_parameters(s: str) -> str:
    """`name<...>(params) const` -> `name<...>`: the text before the last top-level parenthesis group."""
    depth, cut = 0, len(s)
    for i, c in enumerate(s):
        if c in _OPEN:
            if c == "(" and depth == 0 and i > 0:
                cut = i
            depth += 1
        elif c in _CLOSE:
            depth -= 1
            if depth < 0:
                raise ValueError(s)
    if depth:
        raise ValueError(s)
    return s[:cut].strip() if cut < len(s) else s.strip()


def _split(s: str, sep: str) -> list[str]:
    """`s` split at the `sep`s outside brackets, empty parts dropped."""
    out, depth, start, i = [], 0, 0, 0
    while i < len(s):
        c = s[i]
        if c in _OPEN:
            depth += 1
        elif c in _CLOSE:
            depth -= 1
        elif depth == 0 and s.startswith(sep, i):
            out.append(s[start:i])
            i += len(sep)
            start = i
            continue
        i += 1
    out.append(s[start:])
    return [p.strip() for p in out if p.strip()]


def _template(comp: str) -> tuple[str, list[str]]:
    """`name<a, b<c>>` -> (`name`, [`a`, `b<c>`])."""
    at = comp.find("<")
    if at <= 0 or not comp.endswith(">"):
        return comp.strip(), []
    return comp[:at].strip(), _split(comp[at + 1 : -1], ",")


# -- a small Itanium demangler: names and template arguments, enough for a short name ---------------

_BUILTIN_CODES = {
    "v": "void", "b": "bool", "c": "char", "a": "signed char", "h": "unsigned char", "s": "short",
    "t": "unsigned short", "i": "int", "j": "unsigned int", "l": "long", "m": "unsigned long",
    "x": "long long", "y": "unsigned long long", "n": "__int128", "o": "unsigned __int128", "f": "float",
    "d": "double", "e": "long double", "g": "__float128", "z": "...", "w": "wchar_t",
}  # fmt: skip


class _Bad(Exception):
    pass


class _Demangler:
    def __init__(self, s: str) -> None:
        self.s, self.i = s, 0
        self.subs: list[str] = []  # substitution candidates: each prefix of a nested name, as it is read

    def peek(self) -> str:
        return self.s[self.i] if self.i < len(self.s) else ""

    def take(self, n: int = 1) -> str:
        if self.i + n > len(self.s):
            raise _Bad()
        out = self.s[self.i : self.i + n]
        self.i += n
        return out

    def number(self) -> int:
        start = self.i
        while self.peek().isdigit():
            self.i += 1
        if start == self.i or self.i - start > 6:
            raise _Bad()
        return int(self.s[start : self.i])

    def source_name(self) -> str:
        n = self.number()
        name = self.take(n)
        return "(anonymous namespace)" if name.startswith("_GLOBAL__N") else name

    def substitution(self) -> str:
        self.take()  # S
        c = self.peek()
        if c in "tabsio" and c:  # St (std::), Sa, Sb, Ss, Si, So
            self.take()
            return "std"
        seq = ""
        while self.peek() and self.peek() != "_":
            seq += self.take()
        self.take()  # _
        # S_ is the first candidate, S0_ the second, S1_ the third (base 36)
        at = int(seq, 36) + 1 if seq.isalnum() else 0 if not seq else -1
        return self.subs[at] if 0 <= at < len(self.subs) else "…"

    def template_args(self) -> str:
        self.take()  # I or J
        args = []
        while self.peek() != "E":
            if not self.peek():
                raise _Bad()
            args.append(self.arg())
        self.take()
        return "<" + ", ".join(args) + ">"

    def arg(self) -> str:
        c = self.peek()
        if c == "L":  # a literal: L <type> <value> E
            self.take()
            if self.peek() == "_" and self.s.startswith("_Z", self.i):
                raise _Bad()
            kind = self.arg()
            neg = self.peek() == "n"
            if neg:
                self.take()
            start = self.i
            while self.peek() and self.peek() != "E":
                self.take()
            value = self.s[start : self.i]
            self.take()
            if kind == "bool":
                return "true" if value == "1" else "false"
            return ("-" if neg else "") + value if kind in _BUILTIN_CODES.values() else f"({kind}){value}"
        if c == "J":
            return self.template_args()[1:-1]
        return self.type()

    def type(self) -> str:
        c = self.peek()
        if c in _BUILTIN_CODES:
            self.take()
            return _BUILTIN_CODES[c]
        if c in "PRO":
            self.take()
            return self.type() + {"P": "*", "R": "&", "O": "&&"}[c]
        if c in "KVr":
            self.take()
            return self.type()
        if c == "D":
            self.take(2)
            return "?"
        if c == "T":  # a template parameter
            self.take()
            while self.peek() and self.peek() != "_":
                self.take()
            self.take()
            return "T"
        return self.name()

    def name(self) -> str:
        c = self.peek()
        if c == "N":
            self.take()
            while self.peek() in ("K", "V", "r"):
                self.take()
            parts: list[str] = []
            while self.peek() != "E":
                c = self.peek()
                if not c:
                    raise _Bad()
                if c.isdigit():
                    parts.append(self.source_name())
                    self.subs.append("::".join(parts))
                elif c == "S":
                    parts.append(self.substitution())
                elif c == "I" and parts:
                    parts[-1] += self.template_args()
                    self.subs.append("::".join(parts))
                elif c in "CD":
                    self.take(2)
                    parts.append(parts[-1].split("<")[0] if parts else "?")
                elif c == "T":
                    parts.append(self.type())
                else:
                    raise _Bad()
            self.take()
            return "::".join(parts)
        if c.isdigit():
            out = self.source_name()
        elif c == "S":
            out = self.substitution()
            if self.peek().isdigit():  # St3foo: std::foo
                out += "::" + self.source_name()
        else:
            raise _Bad()
        if self.peek() == "I":
            out += self.template_args()
        return out


def demangle(symbol: str) -> str | None:
    """A mangled C++ symbol's name with its template arguments (`_ZN7cutlass6KernelI...EEvT_` ->
    `cutlass::Kernel<...>`), the function's parameters left out; None where this small demangler
    cannot read it."""
    if not symbol.startswith("_Z") or len(symbol) > 20_000:
        return None
    d = _Demangler(symbol)
    d.i = 2
    try:
        return d.name()
    except (_Bad, ValueError, IndexError):
        return None
