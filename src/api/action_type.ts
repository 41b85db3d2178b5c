/** The names of the actions, as a plain type for clients (`ACTIONS` in `request_schemas.ts` lists them). */

/** Every action of `POST /manage`. */
export type Action =
  | "createIndex"
  | "getIndex"
  | "listIndexes"
  | "deleteIndex"
  | "addDocs"
  | "deleteDocs"
  | "getDocs"
  | "search"
  | "multiSearch"
  | "reembedIndex"
  | "exportIndex"
  | "importIndex"
  | "createKey"
  | "listKeys"
  | "deleteKey"
  | "getWebhookSecret"
  | "rotateWebhookSecret"
  | "setAlias"
  | "deleteAlias"
  | "listAliases"
  | "restoreIndex"
  | "listDeletedIndexes"
  | "updateSettings"
  | "searchAnalytics"
  | "recordClick";
