/** A PYTORCH_CUDA_ALLOC_CONF string that PyTorch would refuse, or that splitscope cannot model. */
export class ConfigError extends Error {
  override readonly name = 'ConfigError';
  constructor(
    message: string,
    /** Character offset in the config string where the problem starts, when known. */
    readonly at?: number,
  ) {
    super(message);
  }
}
