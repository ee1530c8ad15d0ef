#!/usr/bin/env bash
# DDP against reality (docs/validation.md): for each multi-GPU fixture, the
# measured iteration, the trace without its communication (the single-GPU
# view), ddp.dd modelling the all-reduces (existing=remove) at the trace's
# world size and implied bandwidth, and ddp.dd reusing the trace's own
# all-reduces (the default) at its traced configuration and on 2 x 8 GPUs.
# Usage: tests/validation/ddp_against_traces.sh [path/to/ddscript]
set -euo pipefail
DD=${1:-build/ddscript}
D=tests/data/hta
strip=$(mktemp --suffix=.dd)
trap 'rm -f "$strip"' EXIT
echo 'remove select comm' >"$strip"
row() { # label, trace, args...
  local label=$1 trace=$2
  shift 2
  local out
  out=$("$DD" run "$@" --trace "$trace" --format json 2>/dev/null)
  python3 -c 'import json,sys; d=json.loads(sys.argv[2]); m=d["measured_ns"]; p=d["predicted_ns"]; print(f"{sys.argv[1]:<58} measured {m/1e6:9.3f} ms  predicted {p/1e6:9.3f} ms  error {100*(p-m)/m:+6.2f}%")' "$label" "$out"
}
echo "== ddp2_a100_nccl_data (world 2, one machine; all-reduce busbw 12.99 GB/s, 97.49 MiB per iteration)"
"$DD" run tests/validation/implied_bandwidth.dd --trace $D/ddp2_a100_nccl_data.json.gz | sed -n 1,3p
row "communication removed" $D/ddp2_a100_nccl_data.json.gz "$strip"
row "ddp.dd 1x2, 12.99 GB/s, 97.49 MiB" $D/ddp2_a100_nccl_data.json.gz ddp \
  --set existing=remove --set machines=1 --set gpus_per_machine=2 --set intra_gbps=12.99GBps --set model_bytes=97.49MiB
row "ddp.dd 1x2, 1.3 GB/s (10x slower, sensitivity)" $D/ddp2_a100_nccl_data.json.gz ddp \
  --set existing=remove --set machines=1 --set gpus_per_machine=2 --set intra_gbps=1.3GBps --set model_bytes=97.49MiB
row "ddp.dd reusing its all-reduces, at the traced 1x2" $D/ddp2_a100_nccl_data.json.gz ddp \
  --set machines=1 --set gpus_per_machine=2
row "ddp.dd reusing its all-reduces, on 2x8 at 100 Gbps" $D/ddp2_a100_nccl_data.json.gz ddp
echo "== ddp2_v100_df_index_resolver (world 2; 404 per-parameter all-reduces, 59.56 ms per iteration, no payloads recorded)"
row "communication removed" $D/ddp2_v100_df_index_resolver.json.gz "$strip"
row "ddp.dd 1x2, per-gradient, 10.54 GB/s (estimated sizes / time)" $D/ddp2_v100_df_index_resolver.json.gz ddp \
  --set existing=remove --set machines=1 --set gpus_per_machine=2 --set bucket_mb=0B --set intra_gbps=10.54GBps --set intra_latency=0us
row "ddp.dd 1x2, 25 MiB buckets, 10.54 GB/s" $D/ddp2_v100_df_index_resolver.json.gz ddp \
  --set existing=remove --set machines=1 --set gpus_per_machine=2 --set intra_gbps=10.54GBps --set intra_latency=0us
row "ddp.dd reusing its all-reduces, at the traced 1x2" $D/ddp2_v100_df_index_resolver.json.gz ddp \
  --set machines=1 --set gpus_per_machine=2
row "ddp.dd reusing its all-reduces, on 2x8 at 100 Gbps" $D/ddp2_v100_df_index_resolver.json.gz ddp
echo "== a100_16rank_rank0 (world 16; sharded: reduce-scatter/all-gather and all-to-all, no all-reduce kernels)"
row "communication removed" $D/a100_16rank_rank0.json.gz "$strip"
row "ddp.dd 2x8, 100 Gbps (not what this job does)" $D/a100_16rank_rank0.json.gz ddp
