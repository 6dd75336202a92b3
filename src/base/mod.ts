/**
 * Building blocks every layer may use and that import no feature layer: the clock, text, line
 * splitting, logging, redaction, origins, executables, the neutral attachment, the version and a
 * median.
 */
export {};
