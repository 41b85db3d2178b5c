/** The shape of a project id, shared by the project store, authentication and the API schemas. */

/** A project id: 1 to 128 letters, digits, `.`, `_` or `-`, starting with a letter or digit. */
export const PROJECT_ID_PATTERN = /^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$/;
