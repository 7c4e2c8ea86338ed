/** A malformed workflow (unknown agent, cycle in D, bad horizon): a mistake in its definition. */
export class WorkflowError extends Error {
  override name = 'WorkflowError';
}
