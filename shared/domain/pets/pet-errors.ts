/**
 * What can go wrong with pets, in the domain's words; shared/http/responses.ts maps them to 404 and
 * 400. The domain knows nothing of HTTP: these say what happened, the mapping says what a client sees.
 */

/** No pet has this id. */
export class PetNotFoundError extends Error {
  constructor(readonly petId: number) {
    super(`No pet has id ${petId}`);
    this.name = 'PetNotFoundError';
  }
}

/** A listing cursor this service did not issue for this exact listing (tampered, truncated, or another filter's). */
export class InvalidCursorError extends Error {
  constructor() {
    super('The cursor was not issued for this listing');
    this.name = 'InvalidCursorError';
  }
}
