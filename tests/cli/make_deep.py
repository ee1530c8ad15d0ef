#!/usr/bin/env python3
"""Writes the deeply nested models of the cli.deep.* tests.

usage: make_deep.py OUT_DIR

Each model nests something far past a limit (docs/validation.md, "Damaged
and adversarial input"), or builds a value as deep at run time; before the
fixes each crashed ddscript with a stack overflow. The slow.* models are
shapes whose parse took ANTLR's full-context prediction tens of seconds.
They are made here, in well under a second, rather than committed.
"""
import os
import shutil
import sys

MODELS = {
    # The parser: prefix operators, lambdas and else-if chains nest without
    # a bracket.
    "neg.dd": "print " + "-" * 20000 + "1\n",
    "not.dd": "print " + "not " * 100000 + "true\n",
    "lambda.dd": "let f = " + "x -> " * 40000 + "1\n",
    "else_if.dd": "if true {}" + " else if true {}" * 50000 + "\n",
    "select.dd": "let s = " + "select task where " * 20000 + "true\n",
    "alloc.dd": "let b = " + "alloc " * 20000 + "1MB on 0\n",
    # Deep only in ANTLR's lookahead: telling an index from a slice scans
    # the whole bracket.
    "lookahead.dd": "let x = [0]\nprint x[" + "-" * 20000 + "0]\n",
    # Past the builder's 256 levels but within the parser's: refused by the
    # builder, where lambdas and else-if chains were not counted.
    "lambda_300.dd": "let f = " + "x -> " * 300 + "1\n",
    "else_if_300.dd": "if true {}" + " else if true {}" * 300 + "\n",
    # Within every limit.
    "lambda_200.dd": "let f = " + "x -> " * 200 + "1\nprint f(1)\n",
    "neg_200.dd": "print " + "- " * 200 + "1\n",
    # As deep as the parser goes (1024 levels) in each way, and a syntax
    # error at the end, so that both of its stages (SLL, then LL with error
    # recovery) walk the whole depth: within an 8 MB stack in a debug build
    # too. The binary operators between prefixes recurse as well.
    "stack_calls.dd": "print " + "f(" * 1024 + "1" + ")" * 1024 + ")\n",
    "stack_lists.dd": "print " + "[(" * 512 + "1" + ")]" * 512 + ")\n",
    "stack_index.dd": "let x = [0]\nprint x[" + "-" * 1023 + "0])\n",
    "stack_mixed.dd": "print "
                      + "not 1 == 1 .. 1 | 1 & 1 + 1 * - " * 127 + "1)\n",
    "stack_lambda.dd": "let f = " + "x -> " * 1024 + "1)\n",
    "stack_else.dd": "if true {}" + " else if true {}" * 1023 + ")\n",
    "stack_select.dd": "let s = " + "select task where " * 1024 + "true)\n",
    # The VM: values nested a million deep, destroyed, printed, compared.
    "list_deep.dd": "let x = []\nfor i in 0..1000000 { x = [x] }\n",
    "print_deep.dd": "let x = []\nfor i in 0..30000 { x = [x] }\nprint x\n",
    "equal_deep.dd": "let x = []\nlet y = []\n"
                     "for i in 0..1000000 { x = [x]\n y = [y] }\n"
                     "print x == y\n",
    "in_deep.dd": "let x = []\nfor i in 0..1000000 { x = [x] }\n"
                  "print x in [1, x]\n",
    "str_deep.dd": "let x = []\nfor i in 0..1000000 { x = [x] }\n"
                   "print len(str(x))\n",
    "closures.dd": "let f = x -> x\n"
                   "for i in 0..1000000 {\n  let g = f\n  f = x -> g(x)\n}\n",
    "set_deep.dd": "let x = []\nfor i in 0..1000000 { x = [x] }\n"
                   "print set(x)\n",
    # A builtin calling the model's function, which calls the builtin:
    # native recursion in the VM, a nested interpreter call per frame.
    "builtin_sum.dd": "fn g(x) {\n  return sum([x], g)\n}\nprint g(1)\n",
    "builtin_sorted.dd": "fn g(x) {\n  return sorted([x, x], key: g)\n}\n"
                         "print g(1)\n",
    # Shared, so small in memory but 2^60 elements to walk: the step budget
    # stops it.
    "equal_shared.dd": "let x = [1]\nlet y = [1]\n"
                       "for i in 0..60 { x = [x, x]\n y = [y, y] }\n"
                       "print x == y\n",
    "print_shared.dd": "let x = [1]\nfor i in 0..60 { x = [x, x] }\n"
                       "print x\n",
    # Parsing: SLL prediction, not full-context LL, for these.
    "slow_index.dd": "let x = [0]\nprint x" + "[0]" * 250 + "\n",
    "slow_call.dd": "fn f(a) { return f }\nlet g = f" + "(1)" * 250 + "\n",
    "slow_or.dd": "let s = select task where "
                  + " or ".join('name == "k%d"' % i for i in range(250))
                  + "\n",
    # A syntax error elsewhere sends the parse to LL prediction, whose
    # work is bounded: 100 s before, about a second now.
    "slow_error_index.dd": ")\nlet x = [0]\nprint x" + "[0]" * 800 + "\n",
    "slow_error_or.dd": ")\nlet s = select task where "
                        + " or ".join('name == "k%d"' % i for i in range(1000))
                        + "\n",
    "slow_index_800.dd": "let x = [0]\nprint x" + "[0]" * 800 + "\n",
    "slow_call_800.dd": "fn f(a) { return f }\nlet g = f" + "(1)" * 800 + "\n",
    "slow_or_1000.dd": "let s = select task where "
                       + " or ".join('name == "k%d"' % i for i in range(1000))
                       + "\n",
}


def main(out):
    shutil.rmtree(out, ignore_errors=True)
    os.makedirs(out)
    for name, text in MODELS.items():
        with open(os.path.join(out, name), "w") as f:
            f.write(text)


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    main(sys.argv[1])
