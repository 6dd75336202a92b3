/**
 * The HTTP server: the wiring of every layer for one configuration, the app and its routes, the
 * listening socket with its connection limits, and serving until shutdown.
 */
export {};
