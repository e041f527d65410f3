export interface ErrorDef {
  /** Stable public code, `<AREA>-<number>`. */
  code: string;
  /** The HTTP status the API answers with. */
  status: number;
  /** Whether clients may retry the same request later (sent as `Retry-After`). */
  retryable: boolean;
  /** A human-readable message, shown to developers, not end users. */
  message: string;
}

export interface ErrorResponse {
  status: number;
  headers: { [name: string]: string };
  body: {
    error: {
      code: string;
      message: string;
      retryable: boolean;
      detail?: string;
    };
  };
}
