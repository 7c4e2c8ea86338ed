;; WebAssembly SIMD (f32x4) kernels for the engine's element-wise and row-wise passes: SwiGLU,
;; softmax rows (vocabulary log-softmax, causal attention), RMSNorm, RoPE, and their backwards;
;; and the panel product of the matrix kernel used when no BLAS library is loaded.
;; V8 runs plain JavaScript loops over Float32Arrays one element at a time with bounds checks
;; (SwiGLU's forward cost ~10 ns per element); these run four lanes at a time (docs/performance.md).
;;
;; Built into kernels-binary.ts by `node scripts/build-wasm.mjs` (wabt); a test rebuilds it and
;; checks that the committed bytes are this file's. Pointers are byte offsets into the imported
;; memory, which src/engine/embedded/wasm/simd.ts creates once (scratch region + arena), shared so that
;; the attention workers (attention-pool.ts) instantiate the same kernels over the same buffers;
;; counts are elements. Element-wise kernels process whole vectors (4 lanes): the caller rounds
;; lengths up to a multiple of 4 elements inside its regions and ignores the lanes past n. Row
;; kernels handle any length.
(module
  (import "env" "memory" (memory 16 65536 shared))

;; e^x in four float32 lanes (Cephes' expf): x = n·ln2 + r, |r| ≤ ln2/2, e^r from a degree-7
  ;; polynomial, 2^n built in the exponent bits. x is clamped to [-87, 88] so 2^n stays a normal
  ;; float: e^-87 ≈ 1.6e-38 stands in for smaller results, which only ever meet sums ≥ 1 here.
  ;; n is rounded by adding 1.5·2^23 (t's low mantissa bits then hold n, so (t + 127) << 23 are
  ;; 2^n's bits): cheaper in V8 than f32x4.nearest and a float-to-int conversion.
  ;; Relative error ≤ 1e-7 (tested against Math.exp).
  (func $exp4 (param $x v128) (result v128)
    (local $t v128) (local $n v128) (local $r v128) (local $p v128)
    (local.set $x (f32x4.pmax (f32x4.pmin (local.get $x) (v128.const f32x4 88 88 88 88))
                              (v128.const f32x4 -87 -87 -87 -87)))
    (local.set $t (f32x4.add (f32x4.mul (local.get $x)
      (v128.const f32x4 1.44269504088896341 1.44269504088896341 1.44269504088896341 1.44269504088896341))
      (v128.const f32x4 12582912 12582912 12582912 12582912)))
    (local.set $n (f32x4.sub (local.get $t) (v128.const f32x4 12582912 12582912 12582912 12582912)))
    ;; r = x − n·ln2, ln2 split so n·C1 is exact
    (local.set $r (f32x4.sub (local.get $x) (f32x4.mul (local.get $n)
      (v128.const f32x4 0.693359375 0.693359375 0.693359375 0.693359375))))
    (local.set $r (f32x4.sub (local.get $r) (f32x4.mul (local.get $n)
      (v128.const f32x4 -2.12194440e-4 -2.12194440e-4 -2.12194440e-4 -2.12194440e-4))))
    (local.set $p (f32x4.add (f32x4.mul (local.get $r)
      (v128.const f32x4 1.9875691500e-4 1.9875691500e-4 1.9875691500e-4 1.9875691500e-4))
      (v128.const f32x4 1.3981999507e-3 1.3981999507e-3 1.3981999507e-3 1.3981999507e-3)))
    (local.set $p (f32x4.add (f32x4.mul (local.get $p) (local.get $r))
      (v128.const f32x4 8.3334519073e-3 8.3334519073e-3 8.3334519073e-3 8.3334519073e-3)))
    (local.set $p (f32x4.add (f32x4.mul (local.get $p) (local.get $r))
      (v128.const f32x4 4.1665795894e-2 4.1665795894e-2 4.1665795894e-2 4.1665795894e-2)))
    (local.set $p (f32x4.add (f32x4.mul (local.get $p) (local.get $r))
      (v128.const f32x4 1.6666665459e-1 1.6666665459e-1 1.6666665459e-1 1.6666665459e-1)))
    (local.set $p (f32x4.add (f32x4.mul (local.get $p) (local.get $r))
      (v128.const f32x4 5.0000001201e-1 5.0000001201e-1 5.0000001201e-1 5.0000001201e-1)))
    ;; e^r = 1 + r + r²·p
    (local.set $p (f32x4.add
      (f32x4.add (f32x4.mul (f32x4.mul (local.get $p) (local.get $r)) (local.get $r)) (local.get $r))
      (v128.const f32x4 1 1 1 1)))
    (f32x4.mul (local.get $p)
      (i32x4.shl (i32x4.add (local.get $t) (v128.const i32x4 127 127 127 127)) (i32.const 23))))

  ;; dst[i] = e^((src[i] − shift)·scale) for n floats (n a multiple of 4; src may equal dst), the
  ;; $exp4 computation written out for four vectors at a time: V8 neither inlines $exp4 nor
  ;; overlaps the dependent steps of consecutive calls, and the interleaved form runs ~2x faster.
  (func $exp_block (param $src i32) (param $dst i32) (param $n i32) (param $shift f32) (param $scale f32)
    (local $end4 i32) (local $end i32) (local $sh v128) (local $sc v128)
    (local $x0 v128) (local $t0 v128) (local $n0 v128) (local $r0 v128) (local $p0 v128) (local $x1 v128) (local $t1 v128) (local $n1 v128) (local $r1 v128) (local $p1 v128) (local $x2 v128) (local $t2 v128) (local $n2 v128) (local $r2 v128) (local $p2 v128) (local $x3 v128) (local $t3 v128) (local $n3 v128) (local $r3 v128) (local $p3 v128)
    (local.set $sh (f32x4.splat (local.get $shift)))
    (local.set $sc (f32x4.splat (local.get $scale)))
    (local.set $end (i32.add (local.get $src) (i32.shl (local.get $n) (i32.const 2))))
    (local.set $end4 (i32.add (local.get $src) (i32.shl (i32.and (local.get $n) (i32.const -16)) (i32.const 2))))
    (block $done (loop $next
      (br_if $done (i32.ge_u (local.get $src) (local.get $end4)))
      (local.set $x0 (f32x4.mul (f32x4.sub (v128.load offset=0 (local.get $src)) (local.get $sh)) (local.get $sc)))
      (local.set $x1 (f32x4.mul (f32x4.sub (v128.load offset=16 (local.get $src)) (local.get $sh)) (local.get $sc)))
      (local.set $x2 (f32x4.mul (f32x4.sub (v128.load offset=32 (local.get $src)) (local.get $sh)) (local.get $sc)))
      (local.set $x3 (f32x4.mul (f32x4.sub (v128.load offset=48 (local.get $src)) (local.get $sh)) (local.get $sc)))
      (local.set $x0 (f32x4.pmax (f32x4.pmin (local.get $x0) (v128.const f32x4 88 88 88 88)) (v128.const f32x4 -87 -87 -87 -87)))
      (local.set $x1 (f32x4.pmax (f32x4.pmin (local.get $x1) (v128.const f32x4 88 88 88 88)) (v128.const f32x4 -87 -87 -87 -87)))
      (local.set $x2 (f32x4.pmax (f32x4.pmin (local.get $x2) (v128.const f32x4 88 88 88 88)) (v128.const f32x4 -87 -87 -87 -87)))
      (local.set $x3 (f32x4.pmax (f32x4.pmin (local.get $x3) (v128.const f32x4 88 88 88 88)) (v128.const f32x4 -87 -87 -87 -87)))
      (local.set $t0 (f32x4.add (f32x4.mul (local.get $x0) (v128.const f32x4 1.44269504088896341 1.44269504088896341 1.44269504088896341 1.44269504088896341)) (v128.const f32x4 12582912 12582912 12582912 12582912)))
      (local.set $t1 (f32x4.add (f32x4.mul (local.get $x1) (v128.const f32x4 1.44269504088896341 1.44269504088896341 1.44269504088896341 1.44269504088896341)) (v128.const f32x4 12582912 12582912 12582912 12582912)))
      (local.set $t2 (f32x4.add (f32x4.mul (local.get $x2) (v128.const f32x4 1.44269504088896341 1.44269504088896341 1.44269504088896341 1.44269504088896341)) (v128.const f32x4 12582912 12582912 12582912 12582912)))
      (local.set $t3 (f32x4.add (f32x4.mul (local.get $x3) (v128.const f32x4 1.44269504088896341 1.44269504088896341 1.44269504088896341 1.44269504088896341)) (v128.const f32x4 12582912 12582912 12582912 12582912)))
      (local.set $n0 (f32x4.sub (local.get $t0) (v128.const f32x4 12582912 12582912 12582912 12582912)))
      (local.set $n1 (f32x4.sub (local.get $t1) (v128.const f32x4 12582912 12582912 12582912 12582912)))
      (local.set $n2 (f32x4.sub (local.get $t2) (v128.const f32x4 12582912 12582912 12582912 12582912)))
      (local.set $n3 (f32x4.sub (local.get $t3) (v128.const f32x4 12582912 12582912 12582912 12582912)))
      (local.set $r0 (f32x4.sub (local.get $x0) (f32x4.mul (local.get $n0) (v128.const f32x4 0.693359375 0.693359375 0.693359375 0.693359375))))
      (local.set $r1 (f32x4.sub (local.get $x1) (f32x4.mul (local.get $n1) (v128.const f32x4 0.693359375 0.693359375 0.693359375 0.693359375))))
      (local.set $r2 (f32x4.sub (local.get $x2) (f32x4.mul (local.get $n2) (v128.const f32x4 0.693359375 0.693359375 0.693359375 0.693359375))))
      (local.set $r3 (f32x4.sub (local.get $x3) (f32x4.mul (local.get $n3) (v128.const f32x4 0.693359375 0.693359375 0.693359375 0.693359375))))
      (local.set $r0 (f32x4.sub (local.get $r0) (f32x4.mul (local.get $n0) (v128.const f32x4 -2.12194440e-4 -2.12194440e-4 -2.12194440e-4 -2.12194440e-4))))
      (local.set $r1 (f32x4.sub (local.get $r1) (f32x4.mul (local.get $n1) (v128.const f32x4 -2.12194440e-4 -2.12194440e-4 -2.12194440e-4 -2.12194440e-4))))
      (local.set $r2 (f32x4.sub (local.get $r2) (f32x4.mul (local.get $n2) (v128.const f32x4 -2.12194440e-4 -2.12194440e-4 -2.12194440e-4 -2.12194440e-4))))
      (local.set $r3 (f32x4.sub (local.get $r3) (f32x4.mul (local.get $n3) (v128.const f32x4 -2.12194440e-4 -2.12194440e-4 -2.12194440e-4 -2.12194440e-4))))
      (local.set $p0 (f32x4.add (f32x4.mul (local.get $r0) (v128.const f32x4 1.9875691500e-4 1.9875691500e-4 1.9875691500e-4 1.9875691500e-4)) (v128.const f32x4 1.3981999507e-3 1.3981999507e-3 1.3981999507e-3 1.3981999507e-3)))
      (local.set $p1 (f32x4.add (f32x4.mul (local.get $r1) (v128.const f32x4 1.9875691500e-4 1.9875691500e-4 1.9875691500e-4 1.9875691500e-4)) (v128.const f32x4 1.3981999507e-3 1.3981999507e-3 1.3981999507e-3 1.3981999507e-3)))
      (local.set $p2 (f32x4.add (f32x4.mul (local.get $r2) (v128.const f32x4 1.9875691500e-4 1.9875691500e-4 1.9875691500e-4 1.9875691500e-4)) (v128.const f32x4 1.3981999507e-3 1.3981999507e-3 1.3981999507e-3 1.3981999507e-3)))
      (local.set $p3 (f32x4.add (f32x4.mul (local.get $r3) (v128.const f32x4 1.9875691500e-4 1.9875691500e-4 1.9875691500e-4 1.9875691500e-4)) (v128.const f32x4 1.3981999507e-3 1.3981999507e-3 1.3981999507e-3 1.3981999507e-3)))
      (local.set $p0 (f32x4.add (f32x4.mul (local.get $p0) (local.get $r0)) (v128.const f32x4 8.3334519073e-3 8.3334519073e-3 8.3334519073e-3 8.3334519073e-3)))
      (local.set $p1 (f32x4.add (f32x4.mul (local.get $p1) (local.get $r1)) (v128.const f32x4 8.3334519073e-3 8.3334519073e-3 8.3334519073e-3 8.3334519073e-3)))
      (local.set $p2 (f32x4.add (f32x4.mul (local.get $p2) (local.get $r2)) (v128.const f32x4 8.3334519073e-3 8.3334519073e-3 8.3334519073e-3 8.3334519073e-3)))
      (local.set $p3 (f32x4.add (f32x4.mul (local.get $p3) (local.get $r3)) (v128.const f32x4 8.3334519073e-3 8.3334519073e-3 8.3334519073e-3 8.3334519073e-3)))
      (local.set $p0 (f32x4.add (f32x4.mul (local.get $p0) (local.get $r0)) (v128.const f32x4 4.1665795894e-2 4.1665795894e-2 4.1665795894e-2 4.1665795894e-2)))
      (local.set $p1 (f32x4.add (f32x4.mul (local.get $p1) (local.get $r1)) (v128.const f32x4 4.1665795894e-2 4.1665795894e-2 4.1665795894e-2 4.1665795894e-2)))
      (local.set $p2 (f32x4.add (f32x4.mul (local.get $p2) (local.get $r2)) (v128.const f32x4 4.1665795894e-2 4.1665795894e-2 4.1665795894e-2 4.1665795894e-2)))
      (local.set $p3 (f32x4.add (f32x4.mul (local.get $p3) (local.get $r3)) (v128.const f32x4 4.1665795894e-2 4.1665795894e-2 4.1665795894e-2 4.1665795894e-2)))
      (local.set $p0 (f32x4.add (f32x4.mul (local.get $p0) (local.get $r0)) (v128.const f32x4 1.6666665459e-1 1.6666665459e-1 1.6666665459e-1 1.6666665459e-1)))
      (local.set $p1 (f32x4.add (f32x4.mul (local.get $p1) (local.get $r1)) (v128.const f32x4 1.6666665459e-1 1.6666665459e-1 1.6666665459e-1 1.6666665459e-1)))
      (local.set $p2 (f32x4.add (f32x4.mul (local.get $p2) (local.get $r2)) (v128.const f32x4 1.6666665459e-1 1.6666665459e-1 1.6666665459e-1 1.6666665459e-1)))
      (local.set $p3 (f32x4.add (f32x4.mul (local.get $p3) (local.get $r3)) (v128.const f32x4 1.6666665459e-1 1.6666665459e-1 1.6666665459e-1 1.6666665459e-1)))
      (local.set $p0 (f32x4.add (f32x4.mul (local.get $p0) (local.get $r0)) (v128.const f32x4 5.0000001201e-1 5.0000001201e-1 5.0000001201e-1 5.0000001201e-1)))
      (local.set $p1 (f32x4.add (f32x4.mul (local.get $p1) (local.get $r1)) (v128.const f32x4 5.0000001201e-1 5.0000001201e-1 5.0000001201e-1 5.0000001201e-1)))
      (local.set $p2 (f32x4.add (f32x4.mul (local.get $p2) (local.get $r2)) (v128.const f32x4 5.0000001201e-1 5.0000001201e-1 5.0000001201e-1 5.0000001201e-1)))
      (local.set $p3 (f32x4.add (f32x4.mul (local.get $p3) (local.get $r3)) (v128.const f32x4 5.0000001201e-1 5.0000001201e-1 5.0000001201e-1 5.0000001201e-1)))
      (local.set $p0 (f32x4.add (f32x4.add (f32x4.mul (f32x4.mul (local.get $p0) (local.get $r0)) (local.get $r0)) (local.get $r0)) (v128.const f32x4 1 1 1 1)))
      (local.set $p1 (f32x4.add (f32x4.add (f32x4.mul (f32x4.mul (local.get $p1) (local.get $r1)) (local.get $r1)) (local.get $r1)) (v128.const f32x4 1 1 1 1)))
      (local.set $p2 (f32x4.add (f32x4.add (f32x4.mul (f32x4.mul (local.get $p2) (local.get $r2)) (local.get $r2)) (local.get $r2)) (v128.const f32x4 1 1 1 1)))
      (local.set $p3 (f32x4.add (f32x4.add (f32x4.mul (f32x4.mul (local.get $p3) (local.get $r3)) (local.get $r3)) (local.get $r3)) (v128.const f32x4 1 1 1 1)))
      (v128.store offset=0 (local.get $dst) (f32x4.mul (local.get $p0) (i32x4.shl (i32x4.add (local.get $t0) (v128.const i32x4 127 127 127 127)) (i32.const 23))))
      (v128.store offset=16 (local.get $dst) (f32x4.mul (local.get $p1) (i32x4.shl (i32x4.add (local.get $t1) (v128.const i32x4 127 127 127 127)) (i32.const 23))))
      (v128.store offset=32 (local.get $dst) (f32x4.mul (local.get $p2) (i32x4.shl (i32x4.add (local.get $t2) (v128.const i32x4 127 127 127 127)) (i32.const 23))))
      (v128.store offset=48 (local.get $dst) (f32x4.mul (local.get $p3) (i32x4.shl (i32x4.add (local.get $t3) (v128.const i32x4 127 127 127 127)) (i32.const 23))))
      (local.set $src (i32.add (local.get $src) (i32.const 64)))
      (local.set $dst (i32.add (local.get $dst) (i32.const 64)))
      (br $next)))
    ;; the last one to three vectors
    (block $done1 (loop $next1
      (br_if $done1 (i32.ge_u (local.get $src) (local.get $end)))
      (v128.store (local.get $dst) (call $exp4 (f32x4.mul (f32x4.sub (v128.load (local.get $src)) (local.get $sh)) (local.get $sc))))
      (local.set $src (i32.add (local.get $src) (i32.const 16)))
      (local.set $dst (i32.add (local.get $dst) (i32.const 16)))
      (br $next1))))

  ;; Exported for the test of the exp: out[i] = e^x[i], n a multiple of 4.
  (func (export "exp_f32") (param $x i32) (param $out i32) (param $n i32)
    (call $exp_block (local.get $x) (local.get $out) (local.get $n) (f32.const 0) (f32.const 1)))

  ;; h = g·σ(g)·u and sig = σ(g), σ(g) = 1 / (1 + e^−g). n rounded up to a multiple of 4.
  (func (export "swiglu_fwd") (param $g i32) (param $u i32) (param $h i32) (param $sig i32) (param $n i32)
    (local $end i32) (local $gv v128) (local $s v128)
    (call $exp_block (local.get $g) (local.get $sig) (local.get $n) (f32.const 0) (f32.const -1))
    (local.set $end (i32.add (local.get $g) (i32.shl (local.get $n) (i32.const 2))))
    (block $done (loop $next
      (br_if $done (i32.ge_u (local.get $g) (local.get $end)))
      (local.set $gv (v128.load (local.get $g)))
      (local.set $s (f32x4.div (v128.const f32x4 1 1 1 1) (f32x4.add (v128.const f32x4 1 1 1 1) (v128.load (local.get $sig)))))
      (v128.store (local.get $sig) (local.get $s))
      (v128.store (local.get $h) (f32x4.mul (f32x4.mul (local.get $gv) (local.get $s)) (v128.load (local.get $u))))
      (local.set $g (i32.add (local.get $g) (i32.const 16)))
      (local.set $u (i32.add (local.get $u) (i32.const 16)))
      (local.set $h (i32.add (local.get $h) (i32.const 16)))
      (local.set $sig (i32.add (local.get $sig) (i32.const 16)))
      (br $next))))

  ;; du = dh·g·s, dg = dh·u·s·(1 + g·(1 − s)) with s = σ(g) from the forward.
  (func (export "swiglu_bwd") (param $dh i32) (param $g i32) (param $u i32) (param $sig i32)
                              (param $dg i32) (param $du i32) (param $n i32)
    (local $end i32) (local $d v128) (local $gv v128) (local $s v128)
    (local.set $end (i32.add (local.get $dh) (i32.shl (local.get $n) (i32.const 2))))
    (block $done (loop $next
      (br_if $done (i32.ge_u (local.get $dh) (local.get $end)))
      (local.set $d (v128.load (local.get $dh)))
      (local.set $gv (v128.load (local.get $g)))
      (local.set $s (v128.load (local.get $sig)))
      (v128.store (local.get $du) (f32x4.mul (f32x4.mul (local.get $d) (local.get $gv)) (local.get $s)))
      (v128.store (local.get $dg)
        (f32x4.mul (f32x4.mul (f32x4.mul (local.get $d) (v128.load (local.get $u))) (local.get $s))
          (f32x4.add (v128.const f32x4 1 1 1 1)
            (f32x4.mul (local.get $gv) (f32x4.sub (v128.const f32x4 1 1 1 1) (local.get $s))))))
      (local.set $dh (i32.add (local.get $dh) (i32.const 16)))
      (local.set $g (i32.add (local.get $g) (i32.const 16)))
      (local.set $u (i32.add (local.get $u) (i32.const 16)))
      (local.set $sig (i32.add (local.get $sig) (i32.const 16)))
      (local.set $dg (i32.add (local.get $dg) (i32.const 16)))
      (local.set $du (i32.add (local.get $du) (i32.const 16)))
      (br $next))))

  ;; Sum of the four lanes of two float64x2 accumulators.
  (func $hsum64 (param $a v128) (param $b v128) (result f64)
    (local.set $a (f64x2.add (local.get $a) (local.get $b)))
    (f64x2.add (local.get $a) (i8x16.shuffle 8 9 10 11 12 13 14 15 0 1 2 3 4 5 6 7 (local.get $a) (local.get $a)))
    (f64x2.extract_lane 0))

  ;; Softmax of rows of x [rows, cols] in place, over the first `visible` entries of each row, the
  ;; rest set to 0: row r sees min(cols, visible0 + r·visibleStep) entries (visibleStep 0 for a
  ;; full vocabulary row; 1 for causal attention, whose row i sees past + i + 1 keys).
  ;; p_j = e^((x_j − max)·invT) / Σ; rowMax[r] (f32) and rowSum[r] (f64, the Σ, summed in float64)
  ;; let the caller form log-sum-exps.
  (func (export "softmax_rows") (param $x i32) (param $rows i32) (param $cols i32)
        (param $visible0 i32) (param $visibleStep i32) (param $invT f32) (param $rowMax i32) (param $rowSum i32)
    (local $r i32) (local $vis i32) (local $row i32) (local $j i32) (local $vecEnd i32)
    (local $mv v128) (local $m f32) (local $e v128) (local $s0 v128) (local $s1 v128) (local $sum f64)
    (local $inv v128) (local $t i32) (local $es f32) (local $invT4 v128)
    (local.set $invT4 (f32x4.splat (local.get $invT)))
    (block $rowsDone (loop $rowLoop
      (br_if $rowsDone (i32.ge_u (local.get $r) (local.get $rows)))
      (local.set $vis (i32.add (local.get $visible0) (i32.mul (local.get $r) (local.get $visibleStep))))
      (if (i32.gt_u (local.get $vis) (local.get $cols)) (then (local.set $vis (local.get $cols))))
      (local.set $row (i32.add (local.get $x) (i32.shl (i32.mul (local.get $r) (local.get $cols)) (i32.const 2))))
      (local.set $vecEnd (i32.and (local.get $vis) (i32.const -4)))
      ;; max
      (local.set $mv (v128.const f32x4 -inf -inf -inf -inf))
      (local.set $j (i32.const 0))
      (block $d1 (loop $l1
        (br_if $d1 (i32.ge_u (local.get $j) (local.get $vecEnd)))
        (local.set $mv (f32x4.max (local.get $mv)
          (v128.load (i32.add (local.get $row) (i32.shl (local.get $j) (i32.const 2))))))
        (local.set $j (i32.add (local.get $j) (i32.const 4)))
        (br $l1)))
      (local.set $m (f32.max (f32.max (f32x4.extract_lane 0 (local.get $mv)) (f32x4.extract_lane 1 (local.get $mv)))
                             (f32.max (f32x4.extract_lane 2 (local.get $mv)) (f32x4.extract_lane 3 (local.get $mv)))))
      (block $d2 (loop $l2
        (br_if $d2 (i32.ge_u (local.get $j) (local.get $vis)))
        (local.set $m (f32.max (local.get $m) (f32.load (i32.add (local.get $row) (i32.shl (local.get $j) (i32.const 2))))))
        (local.set $j (i32.add (local.get $j) (i32.const 1)))
        (br $l2)))
      (f32.store (i32.add (local.get $rowMax) (i32.shl (local.get $r) (i32.const 2))) (local.get $m))
      ;; e^((x − max)·invT), summed in float64
      (call $exp_block (local.get $row) (local.get $row) (local.get $vecEnd) (local.get $m) (local.get $invT))
      (local.set $s0 (v128.const f64x2 0 0))
      (local.set $s1 (v128.const f64x2 0 0))
      (local.set $j (i32.const 0))
      (block $d3 (loop $l3
        (br_if $d3 (i32.ge_u (local.get $j) (local.get $vecEnd)))
        (local.set $e (v128.load (i32.add (local.get $row) (i32.shl (local.get $j) (i32.const 2)))))
        (local.set $s0 (f64x2.add (local.get $s0) (f64x2.promote_low_f32x4 (local.get $e))))
        (local.set $s1 (f64x2.add (local.get $s1) (f64x2.promote_low_f32x4
          (i8x16.shuffle 8 9 10 11 12 13 14 15 0 1 2 3 4 5 6 7 (local.get $e) (local.get $e)))))
        (local.set $j (i32.add (local.get $j) (i32.const 4)))
        (br $l3)))
      (local.set $sum (call $hsum64 (local.get $s0) (local.get $s1)))
      (block $d4 (loop $l4
        (br_if $d4 (i32.ge_u (local.get $j) (local.get $vis)))
        (local.set $t (i32.add (local.get $row) (i32.shl (local.get $j) (i32.const 2))))
        (local.set $es (f32x4.extract_lane 0 (call $exp4 (f32x4.splat
          (f32.mul (f32.sub (f32.load (local.get $t)) (local.get $m)) (local.get $invT))))))
        (f32.store (local.get $t) (local.get $es))
        (local.set $sum (f64.add (local.get $sum) (f64.promote_f32 (local.get $es))))
        (local.set $j (i32.add (local.get $j) (i32.const 1)))
        (br $l4)))
      (f64.store (i32.add (local.get $rowSum) (i32.shl (local.get $r) (i32.const 3))) (local.get $sum))
      ;; normalise
      (local.set $inv (f32x4.splat (f32.demote_f64 (f64.div (f64.const 1) (local.get $sum)))))
      (local.set $j (i32.const 0))
      (block $d5 (loop $l5
        (br_if $d5 (i32.ge_u (local.get $j) (local.get $vecEnd)))
        (local.set $t (i32.add (local.get $row) (i32.shl (local.get $j) (i32.const 2))))
        (v128.store (local.get $t) (f32x4.mul (v128.load (local.get $t)) (local.get $inv)))
        (local.set $j (i32.add (local.get $j) (i32.const 4)))
        (br $l5)))
      (block $d6 (loop $l6
        (br_if $d6 (i32.ge_u (local.get $j) (local.get $vis)))
        (local.set $t (i32.add (local.get $row) (i32.shl (local.get $j) (i32.const 2))))
        (f32.store (local.get $t) (f32.mul (f32.load (local.get $t)) (f32x4.extract_lane 0 (local.get $inv))))
        (local.set $j (i32.add (local.get $j) (i32.const 1)))
        (br $l6)))
      ;; the masked tail
      (memory.fill (i32.add (local.get $row) (i32.shl (local.get $vis) (i32.const 2))) (i32.const 0)
                   (i32.shl (i32.sub (local.get $cols) (local.get $vis)) (i32.const 2)))
      (local.set $r (i32.add (local.get $r) (i32.const 1)))
      (br $rowLoop))))

  ;; Softmax backward in place on dp, rows laid out as for softmax_rows: over the visible entries
  ;; dp_j ← p_j·(dp_j − Σ_k p_k·dp_k) (the dot summed in float64), 0 past them.
  (func (export "softmax_bwd_rows") (param $p i32) (param $dp i32) (param $rows i32) (param $cols i32)
        (param $visible0 i32) (param $visibleStep i32)
    (local $r i32) (local $vis i32) (local $prow i32) (local $drow i32) (local $j i32) (local $vecEnd i32)
    (local $s0 v128) (local $s1 v128) (local $pr v128) (local $dot f64) (local $dotv v128) (local $a i32) (local $b i32)
    (local $dots f32)
    (block $rowsDone (loop $rowLoop
      (br_if $rowsDone (i32.ge_u (local.get $r) (local.get $rows)))
      (local.set $vis (i32.add (local.get $visible0) (i32.mul (local.get $r) (local.get $visibleStep))))
      (if (i32.gt_u (local.get $vis) (local.get $cols)) (then (local.set $vis (local.get $cols))))
      (local.set $prow (i32.add (local.get $p) (i32.shl (i32.mul (local.get $r) (local.get $cols)) (i32.const 2))))
      (local.set $drow (i32.add (local.get $dp) (i32.shl (i32.mul (local.get $r) (local.get $cols)) (i32.const 2))))
      (local.set $vecEnd (i32.and (local.get $vis) (i32.const -4)))
      (local.set $s0 (v128.const f64x2 0 0))
      (local.set $s1 (v128.const f64x2 0 0))
      (local.set $j (i32.const 0))
      (block $d1 (loop $l1
        (br_if $d1 (i32.ge_u (local.get $j) (local.get $vecEnd)))
        (local.set $a (i32.shl (local.get $j) (i32.const 2)))
        (local.set $pr (f32x4.mul (v128.load (i32.add (local.get $prow) (local.get $a)))
                                  (v128.load (i32.add (local.get $drow) (local.get $a)))))
        (local.set $s0 (f64x2.add (local.get $s0) (f64x2.promote_low_f32x4 (local.get $pr))))
        (local.set $s1 (f64x2.add (local.get $s1) (f64x2.promote_low_f32x4
          (i8x16.shuffle 8 9 10 11 12 13 14 15 0 1 2 3 4 5 6 7 (local.get $pr) (local.get $pr)))))
        (local.set $j (i32.add (local.get $j) (i32.const 4)))
        (br $l1)))
      (local.set $dot (call $hsum64 (local.get $s0) (local.get $s1)))
      (block $d2 (loop $l2
        (br_if $d2 (i32.ge_u (local.get $j) (local.get $vis)))
        (local.set $a (i32.shl (local.get $j) (i32.const 2)))
        (local.set $dot (f64.add (local.get $dot) (f64.promote_f32
          (f32.mul (f32.load (i32.add (local.get $prow) (local.get $a))) (f32.load (i32.add (local.get $drow) (local.get $a)))))))
        (local.set $j (i32.add (local.get $j) (i32.const 1)))
        (br $l2)))
      (local.set $dots (f32.demote_f64 (local.get $dot)))
      (local.set $dotv (f32x4.splat (local.get $dots)))
      (local.set $j (i32.const 0))
      (block $d3 (loop $l3
        (br_if $d3 (i32.ge_u (local.get $j) (local.get $vecEnd)))
        (local.set $a (i32.add (local.get $prow) (i32.shl (local.get $j) (i32.const 2))))
        (local.set $b (i32.add (local.get $drow) (i32.shl (local.get $j) (i32.const 2))))
        (v128.store (local.get $b) (f32x4.mul (v128.load (local.get $a)) (f32x4.sub (v128.load (local.get $b)) (local.get $dotv))))
        (local.set $j (i32.add (local.get $j) (i32.const 4)))
        (br $l3)))
      (block $d4 (loop $l4
        (br_if $d4 (i32.ge_u (local.get $j) (local.get $vis)))
        (local.set $a (i32.add (local.get $prow) (i32.shl (local.get $j) (i32.const 2))))
        (local.set $b (i32.add (local.get $drow) (i32.shl (local.get $j) (i32.const 2))))
        (f32.store (local.get $b) (f32.mul (f32.load (local.get $a)) (f32.sub (f32.load (local.get $b)) (local.get $dots))))
        (local.set $j (i32.add (local.get $j) (i32.const 1)))
        (br $l4)))
      (memory.fill (i32.add (local.get $drow) (i32.shl (local.get $vis) (i32.const 2))) (i32.const 0)
                   (i32.shl (i32.sub (local.get $cols) (local.get $vis)) (i32.const 2)))
      (local.set $r (i32.add (local.get $r) (i32.const 1)))
      (br $rowLoop))))

  ;; x[r, :] ·= coef[r] for rows of x [rows, cols] (the vocabulary log-softmax backward's −dlp·p).
  (func (export "scale_rows") (param $x i32) (param $rows i32) (param $cols i32) (param $coef i32)
    (local $r i32) (local $j i32) (local $row i32) (local $c v128) (local $vecEnd i32) (local $t i32)
    (local.set $vecEnd (i32.and (local.get $cols) (i32.const -4)))
    (block $rowsDone (loop $rowLoop
      (br_if $rowsDone (i32.ge_u (local.get $r) (local.get $rows)))
      (local.set $row (i32.add (local.get $x) (i32.shl (i32.mul (local.get $r) (local.get $cols)) (i32.const 2))))
      (local.set $c (v128.load32_splat (i32.add (local.get $coef) (i32.shl (local.get $r) (i32.const 2)))))
      (local.set $j (i32.const 0))
      (block $d1 (loop $l1
        (br_if $d1 (i32.ge_u (local.get $j) (local.get $vecEnd)))
        (local.set $t (i32.add (local.get $row) (i32.shl (local.get $j) (i32.const 2))))
        (v128.store (local.get $t) (f32x4.mul (v128.load (local.get $t)) (local.get $c)))
        (local.set $j (i32.add (local.get $j) (i32.const 4)))
        (br $l1)))
      (block $d2 (loop $l2
        (br_if $d2 (i32.ge_u (local.get $j) (local.get $cols)))
        (local.set $t (i32.add (local.get $row) (i32.shl (local.get $j) (i32.const 2))))
        (f32.store (local.get $t) (f32.mul (f32.load (local.get $t)) (f32x4.extract_lane 0 (local.get $c))))
        (local.set $j (i32.add (local.get $j) (i32.const 1)))
        (br $l2)))
      (local.set $r (i32.add (local.get $r) (i32.const 1)))
      (br $rowLoop))))

  ;; RoPE (rotate_half convention) in place on x [tokens, heads, 2·half]: for each token t, head and
  ;; i < half, with c = cos[t, i] and s = sin[t, i]·dir (dir = −1 rotates back, for the backward):
  ;;   x[i] ← x[i]·c − x[i+half]·s,   x[i+half] ← x[i+half]·c + x[i]·s.
  ;; cos, sin: [tokens, half], the table rows of the tokens' positions. half a multiple of 4.
  (func (export "rope_rows") (param $x i32) (param $tokens i32) (param $heads i32) (param $half i32)
        (param $cos i32) (param $sin i32) (param $dir f32)
    (local $t i32) (local $h i32) (local $i i32) (local $row i32) (local $cs i32) (local $a i32) (local $b i32)
    (local $av v128) (local $bv v128) (local $cv v128) (local $sv v128) (local $d v128) (local $halfBytes i32)
    (local.set $d (f32x4.splat (local.get $dir)))
    (local.set $halfBytes (i32.shl (local.get $half) (i32.const 2)))
    (block $tDone (loop $tLoop
      (br_if $tDone (i32.ge_u (local.get $t) (local.get $tokens)))
      (local.set $cs (i32.mul (local.get $t) (local.get $halfBytes)))
      (local.set $h (i32.const 0))
      (block $hDone (loop $hLoop
        (br_if $hDone (i32.ge_u (local.get $h) (local.get $heads)))
        (local.set $row (i32.add (local.get $x) (i32.shl (i32.mul (i32.add (i32.mul (local.get $t) (local.get $heads)) (local.get $h))
                                                            (local.get $halfBytes)) (i32.const 1))))
        (local.set $i (i32.const 0))
        (block $iDone (loop $iLoop
          (br_if $iDone (i32.ge_u (local.get $i) (local.get $halfBytes)))
          (local.set $a (i32.add (local.get $row) (local.get $i)))
          (local.set $b (i32.add (local.get $a) (local.get $halfBytes)))
          (local.set $av (v128.load (local.get $a)))
          (local.set $bv (v128.load (local.get $b)))
          (local.set $cv (v128.load (i32.add (local.get $cos) (i32.add (local.get $cs) (local.get $i)))))
          (local.set $sv (f32x4.mul (local.get $d) (v128.load (i32.add (local.get $sin) (i32.add (local.get $cs) (local.get $i))))))
          (v128.store (local.get $a) (f32x4.sub (f32x4.mul (local.get $av) (local.get $cv)) (f32x4.mul (local.get $bv) (local.get $sv))))
          (v128.store (local.get $b) (f32x4.add (f32x4.mul (local.get $bv) (local.get $cv)) (f32x4.mul (local.get $av) (local.get $sv))))
          (local.set $i (i32.add (local.get $i) (i32.const 16)))
          (br $iLoop)))
        (local.set $h (i32.add (local.get $h) (i32.const 1)))
        (br $hLoop)))
      (local.set $t (i32.add (local.get $t) (i32.const 1)))
      (br $tLoop))))

  ;; C[m, n] += A[m, k] · B[k, n] for packed panels, all row-major and contiguous: A [m × k],
  ;; B [k × n], C [m × n], with m a multiple of 4 and n a multiple of 8 (the caller pads the panels with
  ;; zeros). Each 4 × 8 block of C stays in eight f32x4 accumulators over the whole k loop: per k, two
  ;; vectors of B and four broadcast elements of A feed 32 multiply-adds. The matrix kernel when no BLAS
  ;; library is loaded (wasm/simd.ts's sgemm; blas.ts).
  (func (export "gemm_panel") (param $a i32) (param $b i32) (param $c i32) (param $m i32) (param $n i32) (param $k i32)
    (local $i i32) (local $j i32) (local $p i32) (local $arow i32) (local $bcol i32) (local $crow i32)
    (local $rowA i32) (local $rowC i32) (local $ldaB i32) (local $ldbB i32) (local $ldcB i32)
    (local $b0 v128) (local $b1 v128) (local $x v128)
    (local $c00 v128) (local $c01 v128) (local $c10 v128) (local $c11 v128) (local $c20 v128) (local $c21 v128) (local $c30 v128) (local $c31 v128)
    (local.set $ldaB (i32.shl (local.get $k) (i32.const 2)))
    (local.set $ldbB (i32.shl (local.get $n) (i32.const 2)))
    (local.set $ldcB (i32.shl (local.get $n) (i32.const 2)))
    (block $iDone (loop $iLoop
      (br_if $iDone (i32.ge_u (local.get $i) (local.get $m)))
      (local.set $rowA (i32.add (local.get $a) (i32.mul (local.get $i) (local.get $ldaB))))
      (local.set $rowC (i32.add (local.get $c) (i32.mul (local.get $i) (local.get $ldcB))))
      (local.set $j (i32.const 0))
      (block $jDone (loop $jLoop
        (br_if $jDone (i32.ge_u (local.get $j) (local.get $n)))
        (local.set $c00 (v128.load offset=0 (i32.add (local.get $rowC) (i32.add (i32.mul (i32.const 0) (local.get $ldcB)) (i32.shl (local.get $j) (i32.const 2))))))
        (local.set $c01 (v128.load offset=16 (i32.add (local.get $rowC) (i32.add (i32.mul (i32.const 0) (local.get $ldcB)) (i32.shl (local.get $j) (i32.const 2))))))
        (local.set $c10 (v128.load offset=0 (i32.add (local.get $rowC) (i32.add (i32.mul (i32.const 1) (local.get $ldcB)) (i32.shl (local.get $j) (i32.const 2))))))
        (local.set $c11 (v128.load offset=16 (i32.add (local.get $rowC) (i32.add (i32.mul (i32.const 1) (local.get $ldcB)) (i32.shl (local.get $j) (i32.const 2))))))
        (local.set $c20 (v128.load offset=0 (i32.add (local.get $rowC) (i32.add (i32.mul (i32.const 2) (local.get $ldcB)) (i32.shl (local.get $j) (i32.const 2))))))
        (local.set $c21 (v128.load offset=16 (i32.add (local.get $rowC) (i32.add (i32.mul (i32.const 2) (local.get $ldcB)) (i32.shl (local.get $j) (i32.const 2))))))
        (local.set $c30 (v128.load offset=0 (i32.add (local.get $rowC) (i32.add (i32.mul (i32.const 3) (local.get $ldcB)) (i32.shl (local.get $j) (i32.const 2))))))
        (local.set $c31 (v128.load offset=16 (i32.add (local.get $rowC) (i32.add (i32.mul (i32.const 3) (local.get $ldcB)) (i32.shl (local.get $j) (i32.const 2))))))
        (local.set $arow (local.get $rowA))
        (local.set $bcol (i32.add (local.get $b) (i32.shl (local.get $j) (i32.const 2))))
        (local.set $p (i32.const 0))
        (block $pDone (loop $pLoop
          (br_if $pDone (i32.ge_u (local.get $p) (local.get $k)))
          (local.set $b0 (v128.load (local.get $bcol)))
          (local.set $b1 (v128.load offset=16 (local.get $bcol)))
          (local.set $x (v128.load32_splat (local.get $arow)))
          (local.set $c00 (f32x4.add (local.get $c00) (f32x4.mul (local.get $x) (local.get $b0))))
          (local.set $c01 (f32x4.add (local.get $c01) (f32x4.mul (local.get $x) (local.get $b1))))
          (local.set $x (v128.load32_splat (i32.add (local.get $arow) (i32.mul (i32.const 1) (local.get $ldaB)))))
          (local.set $c10 (f32x4.add (local.get $c10) (f32x4.mul (local.get $x) (local.get $b0))))
          (local.set $c11 (f32x4.add (local.get $c11) (f32x4.mul (local.get $x) (local.get $b1))))
          (local.set $x (v128.load32_splat (i32.add (local.get $arow) (i32.mul (i32.const 2) (local.get $ldaB)))))
          (local.set $c20 (f32x4.add (local.get $c20) (f32x4.mul (local.get $x) (local.get $b0))))
          (local.set $c21 (f32x4.add (local.get $c21) (f32x4.mul (local.get $x) (local.get $b1))))
          (local.set $x (v128.load32_splat (i32.add (local.get $arow) (i32.mul (i32.const 3) (local.get $ldaB)))))
          (local.set $c30 (f32x4.add (local.get $c30) (f32x4.mul (local.get $x) (local.get $b0))))
          (local.set $c31 (f32x4.add (local.get $c31) (f32x4.mul (local.get $x) (local.get $b1))))
          (local.set $arow (i32.add (local.get $arow) (i32.const 4)))
          (local.set $bcol (i32.add (local.get $bcol) (local.get $ldbB)))
          (local.set $p (i32.add (local.get $p) (i32.const 1)))
          (br $pLoop)))
        (v128.store offset=0 (i32.add (local.get $rowC) (i32.add (i32.mul (i32.const 0) (local.get $ldcB)) (i32.shl (local.get $j) (i32.const 2)))) (local.get $c00))
        (v128.store offset=16 (i32.add (local.get $rowC) (i32.add (i32.mul (i32.const 0) (local.get $ldcB)) (i32.shl (local.get $j) (i32.const 2)))) (local.get $c01))
        (v128.store offset=0 (i32.add (local.get $rowC) (i32.add (i32.mul (i32.const 1) (local.get $ldcB)) (i32.shl (local.get $j) (i32.const 2)))) (local.get $c10))
        (v128.store offset=16 (i32.add (local.get $rowC) (i32.add (i32.mul (i32.const 1) (local.get $ldcB)) (i32.shl (local.get $j) (i32.const 2)))) (local.get $c11))
        (v128.store offset=0 (i32.add (local.get $rowC) (i32.add (i32.mul (i32.const 2) (local.get $ldcB)) (i32.shl (local.get $j) (i32.const 2)))) (local.get $c20))
        (v128.store offset=16 (i32.add (local.get $rowC) (i32.add (i32.mul (i32.const 2) (local.get $ldcB)) (i32.shl (local.get $j) (i32.const 2)))) (local.get $c21))
        (v128.store offset=0 (i32.add (local.get $rowC) (i32.add (i32.mul (i32.const 3) (local.get $ldcB)) (i32.shl (local.get $j) (i32.const 2)))) (local.get $c30))
        (v128.store offset=16 (i32.add (local.get $rowC) (i32.add (i32.mul (i32.const 3) (local.get $ldcB)) (i32.shl (local.get $j) (i32.const 2)))) (local.get $c31))
        (local.set $j (i32.add (local.get $j) (i32.const 8)))
        (br $jLoop)))
      (local.set $i (i32.add (local.get $i) (i32.const 4)))
      (br $iLoop))))

  ;; Σ_i a[i]·b[i] over n floats from byte offsets a and b, summed in float32 lanes (for RMSNorm).
  (func $dot32 (param $a i32) (param $b i32) (param $n i32) (result f32)
    (local $acc v128) (local $j i32) (local $vecEnd i32) (local $s f32)
    (local.set $vecEnd (i32.and (local.get $n) (i32.const -4)))
    (block $d1 (loop $l1
      (br_if $d1 (i32.ge_u (local.get $j) (local.get $vecEnd)))
      (local.set $acc (f32x4.add (local.get $acc)
        (f32x4.mul (v128.load (i32.add (local.get $a) (i32.shl (local.get $j) (i32.const 2))))
                   (v128.load (i32.add (local.get $b) (i32.shl (local.get $j) (i32.const 2)))))))
      (local.set $j (i32.add (local.get $j) (i32.const 4)))
      (br $l1)))
    (local.set $s (f32.add (f32.add (f32x4.extract_lane 0 (local.get $acc)) (f32x4.extract_lane 1 (local.get $acc)))
                           (f32.add (f32x4.extract_lane 2 (local.get $acc)) (f32x4.extract_lane 3 (local.get $acc)))))
    (block $d2 (loop $l2
      (br_if $d2 (i32.ge_u (local.get $j) (local.get $n)))
      (local.set $s (f32.add (local.get $s) (f32.mul (f32.load (i32.add (local.get $a) (i32.shl (local.get $j) (i32.const 2))))
                                                      (f32.load (i32.add (local.get $b) (i32.shl (local.get $j) (i32.const 2)))))))
      (local.set $j (i32.add (local.get $j) (i32.const 1)))
      (br $l2)))
    (local.get $s))

  ;; RMSNorm rows: y = w ⊙ (x · rstd), rstd = 1/sqrt(mean(x²) + eps), rstd kept per row.
  (func (export "rmsnorm_fwd") (param $x i32) (param $w i32) (param $y i32) (param $rstd i32)
        (param $rows i32) (param $dim i32) (param $eps f32)
    (local $r i32) (local $j i32) (local $xr i32) (local $yr i32) (local $s f32) (local $sv v128)
    (local $vecEnd i32) (local $a i32)
    (local.set $vecEnd (i32.and (local.get $dim) (i32.const -4)))
    (block $rowsDone (loop $rowLoop
      (br_if $rowsDone (i32.ge_u (local.get $r) (local.get $rows)))
      (local.set $xr (i32.add (local.get $x) (i32.shl (i32.mul (local.get $r) (local.get $dim)) (i32.const 2))))
      (local.set $yr (i32.add (local.get $y) (i32.shl (i32.mul (local.get $r) (local.get $dim)) (i32.const 2))))
      (local.set $s (f32.div (f32.const 1) (f32.sqrt (f32.add
        (f32.div (call $dot32 (local.get $xr) (local.get $xr) (local.get $dim)) (f32.convert_i32_u (local.get $dim)))
        (local.get $eps)))))
      (f32.store (i32.add (local.get $rstd) (i32.shl (local.get $r) (i32.const 2))) (local.get $s))
      (local.set $sv (f32x4.splat (local.get $s)))
      (local.set $j (i32.const 0))
      (block $d1 (loop $l1
        (br_if $d1 (i32.ge_u (local.get $j) (local.get $vecEnd)))
        (local.set $a (i32.shl (local.get $j) (i32.const 2)))
        (v128.store (i32.add (local.get $yr) (local.get $a))
          (f32x4.mul (v128.load (i32.add (local.get $w) (local.get $a)))
                     (f32x4.mul (v128.load (i32.add (local.get $xr) (local.get $a))) (local.get $sv))))
        (local.set $j (i32.add (local.get $j) (i32.const 4)))
        (br $l1)))
      (block $d2 (loop $l2
        (br_if $d2 (i32.ge_u (local.get $j) (local.get $dim)))
        (local.set $a (i32.shl (local.get $j) (i32.const 2)))
        (f32.store (i32.add (local.get $yr) (local.get $a))
          (f32.mul (f32.load (i32.add (local.get $w) (local.get $a)))
                   (f32.mul (f32.load (i32.add (local.get $xr) (local.get $a))) (local.get $s))))
        (local.set $j (i32.add (local.get $j) (i32.const 1)))
        (br $l2)))
      (local.set $r (i32.add (local.get $r) (i32.const 1)))
      (br $rowLoop))))

  ;; RMSNorm backward rows: with x̂ = x·rstd and g = w⊙dy,
  ;;   dx = rstd·(g − x̂·mean(x̂⊙g))   (added to dx when accumulate ≠ 0, written otherwise)
  ;;   dw += Σ_rows dy⊙x̂             (when withDw ≠ 0)
  (func (export "rmsnorm_bwd") (param $dy i32) (param $x i32) (param $w i32) (param $rstd i32)
        (param $dx i32) (param $dw i32) (param $rows i32) (param $dim i32) (param $accumulate i32) (param $withDw i32)
    (local $r i32) (local $j i32) (local $a i32) (local $xr i32) (local $dyr i32) (local $dxr i32)
    (local $s f32) (local $sv v128) (local $acc v128) (local $dot f32) (local $mv v128) (local $xh v128)
    (local $dyv v128) (local $gv v128) (local $res v128) (local $vecEnd i32)
    (local $xs f32) (local $gs f32) (local $rs f32)
    (local.set $vecEnd (i32.and (local.get $dim) (i32.const -4)))
    (block $rowsDone (loop $rowLoop
      (br_if $rowsDone (i32.ge_u (local.get $r) (local.get $rows)))
      (local.set $a (i32.shl (i32.mul (local.get $r) (local.get $dim)) (i32.const 2)))
      (local.set $xr (i32.add (local.get $x) (local.get $a)))
      (local.set $dyr (i32.add (local.get $dy) (local.get $a)))
      (local.set $dxr (i32.add (local.get $dx) (local.get $a)))
      (local.set $s (f32.load (i32.add (local.get $rstd) (i32.shl (local.get $r) (i32.const 2)))))
      (local.set $sv (f32x4.splat (local.get $s)))
      ;; dot = Σ x̂⊙g, and dw
      (local.set $acc (v128.const f32x4 0 0 0 0))
      (local.set $j (i32.const 0))
      (block $d1 (loop $l1
        (br_if $d1 (i32.ge_u (local.get $j) (local.get $vecEnd)))
        (local.set $a (i32.shl (local.get $j) (i32.const 2)))
        (local.set $xh (f32x4.mul (v128.load (i32.add (local.get $xr) (local.get $a))) (local.get $sv)))
        (local.set $dyv (v128.load (i32.add (local.get $dyr) (local.get $a))))
        (local.set $acc (f32x4.add (local.get $acc)
          (f32x4.mul (f32x4.mul (local.get $dyv) (v128.load (i32.add (local.get $w) (local.get $a)))) (local.get $xh))))
        (if (local.get $withDw) (then
          (v128.store (i32.add (local.get $dw) (local.get $a))
            (f32x4.add (v128.load (i32.add (local.get $dw) (local.get $a))) (f32x4.mul (local.get $dyv) (local.get $xh))))))
        (local.set $j (i32.add (local.get $j) (i32.const 4)))
        (br $l1)))
      (local.set $dot (f32.add (f32.add (f32x4.extract_lane 0 (local.get $acc)) (f32x4.extract_lane 1 (local.get $acc)))
                               (f32.add (f32x4.extract_lane 2 (local.get $acc)) (f32x4.extract_lane 3 (local.get $acc)))))
      (block $d2 (loop $l2
        (br_if $d2 (i32.ge_u (local.get $j) (local.get $dim)))
        (local.set $a (i32.shl (local.get $j) (i32.const 2)))
        (local.set $xs (f32.mul (f32.load (i32.add (local.get $xr) (local.get $a))) (local.get $s)))
        (local.set $gs (f32.load (i32.add (local.get $dyr) (local.get $a))))
        (local.set $dot (f32.add (local.get $dot)
          (f32.mul (f32.mul (local.get $gs) (f32.load (i32.add (local.get $w) (local.get $a)))) (local.get $xs))))
        (if (local.get $withDw) (then
          (f32.store (i32.add (local.get $dw) (local.get $a))
            (f32.add (f32.load (i32.add (local.get $dw) (local.get $a))) (f32.mul (local.get $gs) (local.get $xs))))))
        (local.set $j (i32.add (local.get $j) (i32.const 1)))
        (br $l2)))
      ;; dx
      (local.set $mv (f32x4.splat (f32.div (local.get $dot) (f32.convert_i32_u (local.get $dim)))))
      (local.set $j (i32.const 0))
      (block $d3 (loop $l3
        (br_if $d3 (i32.ge_u (local.get $j) (local.get $vecEnd)))
        (local.set $a (i32.shl (local.get $j) (i32.const 2)))
        (local.set $gv (f32x4.mul (v128.load (i32.add (local.get $dyr) (local.get $a))) (v128.load (i32.add (local.get $w) (local.get $a)))))
        (local.set $xh (f32x4.mul (v128.load (i32.add (local.get $xr) (local.get $a))) (local.get $sv)))
        (local.set $res (f32x4.mul (local.get $sv) (f32x4.sub (local.get $gv) (f32x4.mul (local.get $xh) (local.get $mv)))))
        (if (local.get $accumulate) (then
          (local.set $res (f32x4.add (local.get $res) (v128.load (i32.add (local.get $dxr) (local.get $a)))))))
        (v128.store (i32.add (local.get $dxr) (local.get $a)) (local.get $res))
        (local.set $j (i32.add (local.get $j) (i32.const 4)))
        (br $l3)))
      (block $d4 (loop $l4
        (br_if $d4 (i32.ge_u (local.get $j) (local.get $dim)))
        (local.set $a (i32.shl (local.get $j) (i32.const 2)))
        (local.set $gs (f32.mul (f32.load (i32.add (local.get $dyr) (local.get $a))) (f32.load (i32.add (local.get $w) (local.get $a)))))
        (local.set $xs (f32.mul (f32.load (i32.add (local.get $xr) (local.get $a))) (local.get $s)))
        (local.set $rs (f32.mul (local.get $s) (f32.sub (local.get $gs) (f32.mul (local.get $xs) (f32x4.extract_lane 0 (local.get $mv))))))
        (if (local.get $accumulate) (then
          (local.set $rs (f32.add (local.get $rs) (f32.load (i32.add (local.get $dxr) (local.get $a)))))))
        (f32.store (i32.add (local.get $dxr) (local.get $a)) (local.get $rs))
        (local.set $j (i32.add (local.get $j) (i32.const 1)))
        (br $l4)))
      (local.set $r (i32.add (local.get $r) (i32.const 1)))
      (br $rowLoop))))
)
