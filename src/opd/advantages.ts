// The per-token advantages of MAS-OPD (spec section 5; MAS-OPD paper Eq. 9–10, 23), for one
// response y of role i:
//   A_OPD,k  = ℓ_T(y_k | u, r_i) − log π_θi(y_k | x, y_<k)      (the negative per-token reverse KL)
//   A_role,k = ℓ_T(y_k | u, r_i) − ℓ_T(y_k | u, κ(r_i))        (RAS: the same response under the contrasting role)
//   A_k      = A_OPD,k + λ·A_role,k
// ℓ_T is the frozen teacher's log-prob; the student's is the rollout's behaviour log-prob. All are
// constants of the update (stop-gradient).

export interface OpdAdvantages {
  opd: Float64Array;
  role: Float64Array;
  total: Float64Array;
}

export function opdAdvantages(
  teacher: ArrayLike<number>,
  teacherContrast: ArrayLike<number> | null,
  student: ArrayLike<number>,
  lambda: number,
): OpdAdvantages {
  const n = student.length;
  if (teacher.length !== n) throw new Error(`teacher scored ${teacher.length} tokens, the response has ${n}`);
  if (teacherContrast && teacherContrast.length !== n) throw new Error(`the contrasting teacher pass scored ${teacherContrast.length} tokens, the response has ${n}`);
  const opd = new Float64Array(n);
  const role = new Float64Array(n);
  const total = new Float64Array(n);
  for (let k = 0; k < n; k++) {
    opd[k] = teacher[k]! - student[k]!;
    role[k] = teacherContrast ? teacher[k]! - teacherContrast[k]! : 0;
    total[k] = opd[k]! + lambda * role[k]!;
  }
  return { opd, role, total };
}
