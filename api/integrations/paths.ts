/** The API's base path (as api/app.ts mounts it), without importing the app. */
export const API_BASE_PATH = '/api/v1';
