// Written by `npm run generate` from shared/operations/*-operation.ts: edit those, never this file.
import type { OperationChecks } from './check-requests';
import type { OperationId } from '../facts/routes';

/** What each operation states of the requests a deployment sends it: its pre-traffic check and its traffic. */
export const OPERATION_CHECKS = {
  "listPets": {
    "check": {
      "name": "lists pets to an authenticated caller",
      "request": {
        "query": {
          "limit": "1"
        }
      },
      "expect": {
        "kind": "listing"
      }
    },
    "traffic": [
      {
        "query": {
          "limit": "1"
        }
      },
      {
        "query": {
          "limit": "20"
        }
      }
    ]
  },
  "createPet": {
    "check": {
      "name": "refuses a pet without its required fields, storing nothing",
      "request": {
        "headers": {
          "content-type": "application/json"
        },
        "body": "{}"
      },
      "expect": {
        "kind": "error",
        "code": "invalid_parameter"
      }
    },
    "traffic": [
      {
        "headers": {
          "content-type": "application/json"
        },
        "body": "{}"
      }
    ]
  },
  "getPet": {
    "check": {
      "name": "answers 404 for a pet that does not exist",
      "request": {},
      "expect": {
        "kind": "error",
        "code": "not_found"
      }
    },
    "traffic": [
      {}
    ]
  }
} as const satisfies Readonly<Record<OperationId, OperationChecks>>;
