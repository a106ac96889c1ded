// Shared helpers of the http_api_*.test.ts files.

/** The `{error:{code,message}}` of an error response. */
export const errorOf = async (response: Response): Promise<{ code: string; message: string }> =>
  ((await response.json()) as { error: { code: string; message: string } }).error;
