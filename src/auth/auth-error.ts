/**
 * The two refusals of ACL 2.0 (Apache's AuthenticationException / AuthorizationException).
 * Both become NO_PERMISSION (16) with the message as remark on the remoting port, and
 * UNAUTHORIZED / FORBIDDEN on the gRPC front. Messages follow Apache's wording.
 */
import { TsmqError } from '../common/errors.js';

/** The caller could not be identified (no AccessKey, unknown user, bad signature, disabled user). */
export class AuthenticationError extends TsmqError {
  constructor(message: string) {
    super('AUTHENTICATION_FAILED', message);
  }
}

/** The caller is known but may not do this (no matching Allow entry, a Deny entry, bad ACL input). */
export class AuthorizationError extends TsmqError {
  constructor(message: string) {
    super('AUTHORIZATION_FAILED', message);
  }
}
