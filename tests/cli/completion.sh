#!/usr/bin/env bash
# Shell completion as a user gets it: `gpuadmit completion bash` sourced into bash, its function called as
# bash calls it (COMP_WORDS, COMP_CWORD) for gpuadmit and for kubectl-gpuadmit; kubectl's plugin completion
# through a link named kubectl_complete-gpuadmit; fish's script through fish's own `complete -C`, zsh's
# registration through compinit.
# Every flag that completes for a command is one its --help lists, and the other way round.
set -euo pipefail
BIN=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
ln -s "$BIN" "$work/gpuadmit"
ln -s "$BIN" "$work/kubectl-gpuadmit"
ln -s "$BIN" "$work/kubectl_complete-gpuadmit"
export PATH=$work:$PATH
fail=0

# complete WORD... : COMPREPLY for the last word, one per line.
complete_words() {
  bash -c 'source <(gpuadmit completion bash); COMP_WORDS=("$@"); COMP_CWORD=$(($# - 1)); _gpuadmit_complete
    printf "%s\n" "${COMPREPLY[@]}"' complete "$@"
}
expect() {
  local want=$1 got
  shift
  got=$(complete_words "$@" | tr '\n' ' ')
  if [[ $got == "$want " ]]; then echo "ok   $* -> $want"; else echo "FAIL $* -> '$got', want '$want'"; fail=1; fi
}
expect "audit" gpuadmit au
expect "--kubeconfig" gpuadmit audit --kube
expect "default validate schema crds" gpuadmit policy ""
expect "text json yaml" gpuadmit why -o ""
expect "--policy" kubectl-gpuadmit check --pol
expect "" gpuadmit check -f ""  # files: bash's own completion (-o default)

# kubectl's plugin completion: kubectl runs kubectl_complete-gpuadmit with the words after `kubectl gpuadmit`.
got=$(kubectl_complete-gpuadmit why --con)
if [[ $got == $'--context\tkubeconfig context (default: current-context)\n:4' ]]; then
  echo "ok   kubectl_complete-gpuadmit why --con"
else
  echo "FAIL kubectl_complete-gpuadmit why --con: $got"; fail=1
fi

# Every command's flags complete, and only those its --help lists.
for cmd in check test serve policy certs cluster recommend audit why; do
  help=$(gpuadmit "$cmd" --help | { grep -oE '^ +(-[a-zA-Z], )?--[a-z][a-z0-9-]*' || true; } |
    { grep -oE -- '--[a-z0-9-]+' || true; } | sort -u)
  completed=$(gpuadmit __complete "$cmd" -- | { grep -v '^:' || true; } | cut -f1 | sort -u)
  if [[ $help == "$completed" ]]; then
    echo "ok   $cmd: $(grep -c . <<<"$help" || true) flags complete, as its --help lists"
  else
    echo "FAIL $cmd: --help lists [$(tr '\n' ' ' <<<"$help")], completion gives [$(tr '\n' ' ' <<<"$completed")]"; fail=1
  fi
done

# fish, as fish completes (complete -C): commands, flag values without files, files where files go.
# fish_expect WANT LINE: the candidates (their first field) for the command line LINE.
fish_expect() {
  local got
  # shellcheck disable=SC2016  # $argv is fish's, in fish's script
  got=$(cd "$work" && fish -c 'gpuadmit completion fish | source; complete -C $argv[1]' "$2" | cut -f1 | sort | tr '\n' ' ')
  if [[ $got == "$1 " ]]; then echo "ok   fish: '$2' -> $1"; else echo "FAIL fish: '$2' -> '$got', want '$1'"; fail=1; fi
}
# zsh: the script parses and registers _gpuadmit for both names with compdef (its completion itself
# needs a terminal; its words go to the same __complete as bash's and fish's).
if command -v fish >/dev/null && command -v zsh >/dev/null; then
  touch "$work/pod.yaml"
  fish_expect "why" "gpuadmit wh"
  fish_expect "json text yaml" "gpuadmit why -o "
  fish_expect "--context" "kubectl-gpuadmit why --con"
  fish_expect "gpuadmit kubectl-gpuadmit kubectl_complete-gpuadmit pod.yaml" "gpuadmit check -f "
  got=$(zsh -c 'autoload -U compinit && compinit -u -D && source <(gpuadmit completion zsh) &&
    print -r -- ${_comps[gpuadmit]} ${_comps[kubectl-gpuadmit]}')
  if [[ $got == "_gpuadmit _gpuadmit" ]]; then echo "ok   zsh: _gpuadmit registered for gpuadmit and kubectl-gpuadmit"
  else echo "FAIL zsh: compdef gave '$got'"; fail=1; fi
else
  echo "FAIL zsh and fish are not installed (scripts/deps.sh installs them)"; fail=1
fi
gpuadmit completion tcsh >/dev/null 2>&1 && { echo "FAIL an unknown shell was accepted"; fail=1; }
exit "$fail"
