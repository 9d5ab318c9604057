// Written by `npm run generate` from shared/operations/*-operation.ts: edit those, never this file.

/** Every operation of the API: each is also the name of the function that serves it (shared/facts/function-names.ts). */
export const OPERATION_IDS = [
  "listPets",
  "createPet",
  "getPet"
] as const;

/** Each operation's route, as shared/facts/routes.ts types it (Route). */
export const OPERATION_ROUTES = [
  {
    "operationId": "listPets",
    "method": "GET",
    "path": "/pets",
    "reads": [
      "query"
    ],
    "successStatus": 200,
    "errors": [
      "invalid_parameter",
      "invalid_cursor"
    ],
    "paginated": true
  },
  {
    "operationId": "createPet",
    "method": "POST",
    "path": "/pets",
    "reads": [
      "body"
    ],
    "successStatus": 201,
    "errors": [
      "invalid_body",
      "invalid_parameter",
      "idempotency_key_in_use",
      "payload_too_large",
      "unsupported_media_type",
      "idempotency_key_reused"
    ],
    "idempotent": true
  },
  {
    "operationId": "getPet",
    "method": "GET",
    "path": "/pets/{petId}",
    "reads": [
      "path"
    ],
    "successStatus": 200,
    "errors": [
      "invalid_parameter",
      "not_found"
    ],
    "deprecation": {
      "since": new Date("2026-11-22T00:00:00.000Z"),
      "sunset": new Date("2030-12-05T00:00:00.000Z"),
      "successorPath": "/pets"
    }
  }
] as const;

/** The variables each operation's function reads besides the log level and the metrics', by their role (shared/runtime/function-config.ts). */
export const OPERATION_VARIABLES = {
  "listPets": [
    "petsTable",
    "cursorSecret",
    "listingShards"
  ],
  "createPet": [
    "petsTable",
    "idempotencyTable",
    "writeShards"
  ],
  "getPet": [
    "petsTable"
  ]
} as const;
