// Errors of the served API in OpenAI's shape: {"error": {"message", "type", "param", "code"}} with the
// HTTP status OpenAI's API uses for the case (400 a malformed or unsatisfiable request, 404 an unknown
// model or route, 405 a wrong method, 413 a body over the size limit, 500 a failure of the engine).
// A request that fails this way is answered and forgotten: the server keeps serving.

export type ApiErrorType = 'invalid_request_error' | 'not_found_error' | 'server_error';

export class ApiError extends Error {
  constructor(
    readonly status: number,
    message: string,
    readonly type: ApiErrorType = 'invalid_request_error',
    readonly param: string | null = null,
    readonly code: string | null = null,
  ) {
    super(message);
  }

  body(): { error: { message: string; type: string; param: string | null; code: string | null } } {
    return { error: { message: this.message, type: this.type, param: this.param, code: this.code } };
  }
}

/** 400: a field that is missing, of the wrong type or out of range (`param` names it). */
export function invalidParam(param: string, message: string, code: string | null = 'invalid_value'): ApiError {
  return new ApiError(400, `${param}: ${message}`, 'invalid_request_error', param, code);
}

/** 400: a field OpenAI's API has that this server does not implement (at a value that would change the result). */
export function unsupportedParam(param: string, message: string): ApiError {
  return new ApiError(400, `${param}: ${message}`, 'invalid_request_error', param, 'unsupported_parameter');
}

/** 404 for a model this server does not serve, naming the ones it does. */
export function unknownModel(name: string, served: readonly string[]): ApiError {
  return new ApiError(404, `The model '${name}' does not exist (this server serves: ${served.join(', ')})`, 'invalid_request_error', 'model', 'model_not_found');
}

/** 400 for a prompt (with the tokens asked for) longer than the model's context, as OpenAI and vLLM word it. */
export function contextOverflow(param: 'prompt' | 'messages', contextLength: number, promptTokens: number, completionTokens: number | null): ApiError {
  const asked = completionTokens === null
    ? `However, your prompt has ${promptTokens} tokens, which leaves no room for a completion`
    : `However, you requested ${promptTokens + completionTokens} tokens (${promptTokens} in the prompt, ${completionTokens} for the completion)`;
  return new ApiError(400, `This model's maximum context length is ${contextLength} tokens. ${asked}. Please reduce the length of the prompt or of max_tokens.`, 'invalid_request_error', param, 'context_length_exceeded');
}
