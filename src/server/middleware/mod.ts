/**
 * The app's middleware, one job each: browser guards, authentication and its throttle, body
 * limits and the turn slots.
 */
export {};
