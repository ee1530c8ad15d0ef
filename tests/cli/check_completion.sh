#!/usr/bin/env bash
# Bash completion (src/driver/completion/ddscript.bash) against the ddscript
# it completes: usage: check_completion.sh DDSCRIPT COMPLETION_SCRIPT
set -u
exe=$1
source "$2"
comp() {
  COMP_WORDS=("$@")
  COMP_CWORD=$((${#COMP_WORDS[@]} - 1))
  COMPREPLY=()
  _ddscript
  echo " ${COMPREPLY[*]} "
}
fail() { echo "FAIL: $*"; exit 1; }
c=$(comp "$exe" ""); [[ $c == *" run "* && $c == *" opportunities "* && $c == *" convert "* ]] || fail "commands: $c"
[[ $(comp "$exe" op) == " opportunities " ]] || fail "op: $(comp "$exe" op)"
[[ $(comp "$exe" run a) == *" amp "* ]] || fail "models: $(comp "$exe" run a)"
[[ $(comp "$exe" run amp --set "") == *" tensor_core_speedup= "* ]] || fail "params: $(comp "$exe" run amp --set "")"
[[ $(comp "$exe" compare x y --model dd) == *" ddp "* ]] || fail "compare --model: $(comp "$exe" compare x y --model dd)"
[[ $(comp "$exe" replay --tim) == " --timeline " ]] || fail "options: $(comp "$exe" replay --tim)"
echo ok
