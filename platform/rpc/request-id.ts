/** The metadata key (and HTTP header) that carries a request's id from the gateway to the services. */
export const REQUEST_ID_HEADER = "x-request-id";
