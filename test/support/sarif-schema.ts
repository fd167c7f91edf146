import AjvDraft04 from 'ajv-draft-04';
import addFormats from 'ajv-formats';
// The OASIS SARIF 2.1.0 schema as Microsoft's SARIF SDK ships it (draft-04, like the OASIS original).
import sarifSchema from '@microsoft/jest-sarif/lib/schemas/sarif-2.1.0-rtm.5.json';

// unicodeRegExp off: the schema's `language` pattern (`^[a-zA-Z]{2}|^[a-zA-Z]{2}-[a-zA-Z]{2}]?$`)
// has a stray `]` that the `u` flag rejects and a plain RegExp, like the validators the schema was
// written for, reads as a literal. strict off: the schema names required properties it does not define.
const ajv = new AjvDraft04({ allErrors: true, unicodeRegExp: false, strict: false });
addFormats(ajv);
const validate = ajv.compile(sarifSchema);

/** The schema's complaints about `log` as `pointer: message` lines; empty when it is a valid SARIF 2.1.0 log. */
export function sarifSchemaErrors(log: unknown): string[] {
  if (validate(log)) return [];
  return (validate.errors ?? []).map((e) => `${e.instancePath || '/'}: ${e.message ?? e.keyword}`);
}
