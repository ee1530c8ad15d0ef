# Bash completion for ddscript: commands, each command's options, model
# names for `run`, `check`, `disasm` and `compare --model`, and a model's
# parameters after --set. Everything is read from ddscript itself
# (`--help`, `models --format json`), so it stays true as ddscript changes.
# Installed as share/bash-completion/completions/ddscript; to try it from a
# build: source src/driver/completion/ddscript.bash

_ddscript_commands() {
  "$1" --help 2>/dev/null |
    sed -n '/^Subcommands:/,$ s/^  \([a-z][a-z-]*\) .*/\1/p'
}

_ddscript_options() {
  "$1" "$2" --help 2>/dev/null |
    grep -o -- '--[a-z][a-z-]*' | sort -u
}

# Names of the models `ddscript run NAME` finds (libraries left out).
_ddscript_models() {
  "$1" models --format json 2>/dev/null |
    grep -o '"name":"[^"]*","path":"[^"]*","description":"[^"]*","library":false' |
    sed 's/^"name":"\([^"]*\)".*/\1/'
}

# NAME= for each parameter of model $2.
_ddscript_params() {
  "$1" models --format json 2>/dev/null |
    grep -o "\"name\":\"$2\",[^]]*]" |
    grep -o '"name":"[^"]*","default"' | sed 's/"name":"\([^"]*\)".*/\1=/'
}

_ddscript() {
  local cur prev exe cmd i model
  cur=${COMP_WORDS[COMP_CWORD]}
  prev=${COMP_WORDS[COMP_CWORD - 1]}
  exe=${COMP_WORDS[0]}
  cmd=""
  model=""
  for ((i = 1; i < COMP_CWORD; i++)); do
    case ${COMP_WORDS[i]} in
    -*) ;;
    *)
      if [[ -z $cmd ]]; then
        cmd=${COMP_WORDS[i]}
      elif [[ -z $model && ( $cmd == run || $cmd == check || $cmd == disasm ) &&
        ${COMP_WORDS[i - 1]} != -* ]]; then
        model=${COMP_WORDS[i]}
      fi
      ;;
    esac
    if [[ ${COMP_WORDS[i - 1]} == --model || ${COMP_WORDS[i - 1]} == -m ]]; then
      model=${COMP_WORDS[i]}
    fi
  done
  if [[ -z $cmd ]]; then
    COMPREPLY=($(compgen -W "$(_ddscript_commands "$exe") --help --version --timings" -- "$cur"))
    return
  fi
  case $prev in
  --trace | -t | --report | --timeline | -o)
    COMPREPLY=($(compgen -f -- "$cur"))
    return
    ;;
  --model | -m)
    COMPREPLY=($(compgen -W "$(_ddscript_models "$exe")" -f -- "$cur"))
    return
    ;;
  --set)
    [[ -n $model ]] && COMPREPLY=($(compgen -W "$(_ddscript_params "$exe" "$model")" -- "$cur"))
    compopt -o nospace 2>/dev/null
    return
    ;;
  esac
  if [[ $cur == -* ]]; then
    COMPREPLY=($(compgen -W "$(_ddscript_options "$exe" "$cmd")" -- "$cur"))
  elif [[ -z $model && ( $cmd == run || $cmd == check || $cmd == disasm ) ]]; then
    COMPREPLY=($(compgen -W "$(_ddscript_models "$exe")" -f -- "$cur"))
  else
    COMPREPLY=($(compgen -f -- "$cur"))
  fi
}
complete -F _ddscript ddscript
