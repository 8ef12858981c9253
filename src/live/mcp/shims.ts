/**
 * What the MCP server takes from the SDK's `@modelcontextprotocol/server/_shims` on Node, without
 * Ajv. The SDK's Node shims export Ajv as its default JSON Schema validator, and the SDK uses a
 * JSON Schema validator only to check a client's answer to an elicitation (a form the server
 * asks the user to fill), which this server never asks for. Ajv is a third of the server's
 * bundled code and builds its own validators when constructed, both on every server's start.
 * So the server is given `noElicitation` as its validator, and the bundle
 * (scripts/bundle.ts) resolves the shims to this module: the server's start neither compiles nor
 * constructs Ajv. Run unbundled (the library's `createFactTrackerMcpServer`), the SDK's own
 * shims load Ajv, but the server still never constructs it.
 */
import process from 'node:process';
import type { JsonSchemaType, JsonSchemaValidator, jsonSchemaValidator } from '@modelcontextprotocol/server';

/** Why a schema is never checked here: the server asks no elicitation, so no answer is checked against a schema. */
const NO_ELICITATION = 'the fact-tracker MCP server asks no elicitation, so it validates no JSON Schema';

/** A JSON Schema "validator" that refuses every value, saying why: nothing in the server asks it. */
export const noElicitation: jsonSchemaValidator = {
  getValidator:
    <T>(_schema: JsonSchemaType): JsonSchemaValidator<T> =>
    () => ({ valid: false, data: undefined, errorMessage: NO_ELICITATION }),
};

/** The SDK's default validator, in the bundle: `noElicitation`, as a class (the SDK constructs it). */
export class DefaultJsonSchemaValidator implements jsonSchemaValidator {
  getValidator<T>(schema: JsonSchemaType): JsonSchemaValidator<T> {
    return noElicitation.getValidator<T>(schema);
  }
}

export { process };
