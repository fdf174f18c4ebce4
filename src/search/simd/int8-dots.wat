;; Exact int8 dot products of one query with many rows, 16 dimensions a step (WebAssembly
;; SIMD): the search workers' in-memory vector scan (vector-memory.ts) spends its time here.
;; Built into int8-dots-wasm.ts by scripts/build-wasm.ts; a test keeps the two in step.
;;
;; Memory, laid out by int8-dots.ts: the query as i16 (pre-widened once per query), the
;; int32 results, then the rows as int8, each padded with zeros to a multiple of 16.
;; |products| ≤ 128 · 128 = 2^14, so an int32 holds any sum over up to 2^17 dimensions: exact.
(module
  (memory (export "memory") 1)
  ;; out[r] = Σ_i query[i] · rows[r · dimensions + i], for r < count.
  (func (export "dots") (param $query i32) (param $rows i32) (param $count i32) (param $dimensions i32) (param $out i32)
    (local $r i32) (local $i i32) (local $acc v128) (local $row v128) (local $q i32)
    (block $done
      (loop $each_row
        (br_if $done (i32.ge_u (local.get $r) (local.get $count)))
        (local.set $acc (v128.const i32x4 0 0 0 0))
        (local.set $q (local.get $query))
        (local.set $i (i32.const 0))
        (loop $each_16
          (local.set $row (v128.load (local.get $rows)))
          (local.set $acc (i32x4.add (local.get $acc)
            (i32x4.dot_i16x8_s (v128.load (local.get $q)) (i16x8.extend_low_i8x16_s (local.get $row)))))
          (local.set $acc (i32x4.add (local.get $acc)
            (i32x4.dot_i16x8_s (v128.load offset=16 (local.get $q)) (i16x8.extend_high_i8x16_s (local.get $row)))))
          (local.set $rows (i32.add (local.get $rows) (i32.const 16)))
          (local.set $q (i32.add (local.get $q) (i32.const 32)))
          (local.set $i (i32.add (local.get $i) (i32.const 16)))
          (br_if $each_16 (i32.lt_u (local.get $i) (local.get $dimensions))))
        (i32.store (local.get $out)
          (i32.add
            (i32.add (i32x4.extract_lane 0 (local.get $acc)) (i32x4.extract_lane 1 (local.get $acc)))
            (i32.add (i32x4.extract_lane 2 (local.get $acc)) (i32x4.extract_lane 3 (local.get $acc)))))
        (local.set $out (i32.add (local.get $out) (i32.const 4)))
        (local.set $r (i32.add (local.get $r) (i32.const 1)))
        (br $each_row)))))
