/** A workload parameter the user (or a link) gave that the workload cannot take. */
export class WorkloadParamError extends Error {
  override readonly name = 'WorkloadParamError';
  constructor(
    message: string,
    /** The offending parameter's key (the first one, for a constraint between two). */
    readonly key: string,
  ) {
    super(message);
  }
}
