# func: matmul_kernel
# defines: M=64 N=64 K=64
# source: examples/seed_matmul.py
