// The one matrix-product entry point of the kernels (blas.ts: OpenBLAS through koffi, portable fallback).
export { sgemm } from './blas.ts';
