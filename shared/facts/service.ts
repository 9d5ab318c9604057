/** The service's name in every log line and metric dimension; a plain constant so infra/ reads it without the runtime. */
export const SERVICE_NAME = 'animal-store';
