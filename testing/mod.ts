/** Test helpers for hosts and adapter authors. @module */
export {};
