/** What a dashboard server action answers a form with (see app/admin/(console)/actions.ts). */
export type FormState = {
  ok?: boolean;
  /** A message for the whole form: what went wrong, or what was done. */
  error?: string;
  message?: string;
  /** Problems by field name, as lib/admin/changes.ts reports them. */
  fieldErrors?: Record<string, string>;
  /** What was submitted, to put back in the fields after an error. */
  values?: Record<string, string>;
  /** A client secret, shown once. */
  secret?: string;
  /** When the answer was made: a new value on every submission, so fields refresh. */
  at?: number;
};

export type FormAction = (previous: FormState, form: FormData) => Promise<FormState>;
