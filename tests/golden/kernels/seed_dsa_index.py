# func: dsa_index_kernel
# defines: h=4 d=16
# source: examples/seed_dsa_index.py
