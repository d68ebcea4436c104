#!/bin/bash
# workerd with V8's garbage-collection trace (MINIFLARE_WORKERD_V8_FLAGS) copied, each line stamped with the wall
# clock in ms, to $BENCH_GC_LOG; miniflare still reads workerd's output as before. workerd replaces this shell (exec),
# so the signals that stop it reach it. Used by bench/lib/gc.mjs.
here="$(cd "$(dirname "$0")" && pwd)"
exec > >(tee >(grep --line-buffered ' ms: GC: ' | while IFS= read -r line; do printf '%s %s\n' "$(date +%s%3N)" "$line"; done >>"$BENCH_GC_LOG"))
exec stdbuf -oL -eL "$here/../../node_modules/@cloudflare/workerd-linux-64/bin/workerd" "$@"
