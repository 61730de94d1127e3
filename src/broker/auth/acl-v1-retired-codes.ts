/**
 * ACL 1.0's admin request codes, which Apache RocketMQ 5.3.3 removed with ACL 1.0 and tsmq does not
 * serve: a 4.9 mqadmin (`updateAclConfig`, `deleteAclConfig`, `clusterAclConfigVersion`,
 * `updateGlobalWhiteAddr`, ...) still sends them after an upgrade. They stay
 * REQUEST_CODE_NOT_SUPPORTED (3) with Apache's remark, followed by what to do instead
 * (processor-table.ts `retire`).
 */

/** Apache 4.9 RequestCode names of the codes. */
const NAMES: Array<[number, string]> = [
  [50, 'UPDATE_AND_CREATE_ACL_CONFIG'],
  [51, 'DELETE_ACL_CONFIG'],
  [52, 'GET_BROKER_CLUSTER_ACL_INFO'],
  [53, 'UPDATE_GLOBAL_WHITE_ADDRS_CONFIG'],
  [54, 'GET_BROKER_CLUSTER_ACL_CONFIG'],
];

/** [code, explanation] for each retired ACL 1.0 code. */
export const ACL_V1_RETIRED_CODES: ReadonlyArray<readonly [number, string]> = NAMES.map(([code, name]) => [
  code,
  `${name} is ACL 1.0, removed in Apache RocketMQ 5.3.3 as in tsmq: manage users and ACLs with mqadmin 5.x createUser/createAcl/updateAcl; plain_acl.yml is read only by migrateAuthFromV1Enabled=true at start; docs/security.md "From ACL 1.0"`,
]);
