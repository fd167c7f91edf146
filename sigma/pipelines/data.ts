import type { Pipeline } from './types';

/** Sysmon/Windows field names → Elastic Common Schema. */
const ECS_FIELDS: Record<string, string> = {
  EventID: 'event.code',
  Computer: 'host.name',
  Provider_Name: 'winlog.provider_name',
  Channel: 'winlog.channel',
  Image: 'process.executable',
  CommandLine: 'process.command_line',
  CurrentDirectory: 'process.working_directory',
  OriginalFileName: 'process.pe.original_file_name',
  Description: 'process.pe.description',
  Product: 'process.pe.product',
  Company: 'process.pe.company',
  FileVersion: 'process.pe.file_version',
  ProcessId: 'process.pid',
  ProcessGuid: 'process.entity_id',
  IntegrityLevel: 'winlog.event_data.IntegrityLevel',
  User: 'user.name',
  ParentImage: 'process.parent.executable',
  ParentCommandLine: 'process.parent.command_line',
  ParentProcessId: 'process.parent.pid',
  ParentProcessGuid: 'process.parent.entity_id',
  TargetFilename: 'file.path',
  ImageLoaded: 'dll.path',
  Signed: 'dll.code_signature.signed',
  Signature: 'dll.code_signature.subject_name',
  TargetObject: 'registry.path',
  Details: 'registry.data.strings',
  DestinationIp: 'destination.ip',
  DestinationPort: 'destination.port',
  DestinationHostname: 'destination.domain',
  SourceIp: 'source.ip',
  SourcePort: 'source.port',
  SourceHostname: 'source.domain',
  Protocol: 'network.transport',
  Initiated: 'network.direction',
  QueryName: 'dns.question.name',
  TargetImage: 'winlog.event_data.TargetImage',
  SourceImage: 'process.executable',
  GrantedAccess: 'winlog.event_data.GrantedAccess',
  PipeName: 'file.name',
  ScriptBlockText: 'powershell.file.script_block_text',
  TargetUserName: 'user.target.name',
  SubjectUserName: 'user.name',
  IpAddress: 'source.ip',
  LogonType: 'winlog.logon.type',
};

/** Sysmon/Windows field names → Splunk CIM (Endpoint, Network_Traffic, Authentication). */
const CIM_FIELDS: Record<string, string> = {
  EventID: 'signature_id',
  Computer: 'dest',
  Image: 'process_path',
  CommandLine: 'process',
  CurrentDirectory: 'process_current_directory',
  OriginalFileName: 'original_file_name',
  ProcessId: 'process_id',
  ProcessGuid: 'process_guid',
  IntegrityLevel: 'process_integrity_level',
  User: 'user',
  ParentImage: 'parent_process_path',
  ParentCommandLine: 'parent_process',
  ParentProcessId: 'parent_process_id',
  ParentProcessGuid: 'parent_process_guid',
  TargetFilename: 'file_path',
  TargetObject: 'registry_path',
  Details: 'registry_value_data',
  DestinationIp: 'dest_ip',
  DestinationPort: 'dest_port',
  SourceIp: 'src_ip',
  SourcePort: 'src_port',
  Protocol: 'transport',
  QueryName: 'query',
  TargetUserName: 'user',
  IpAddress: 'src',
  Hashes: 'process_hash',
};

const WINDOWS_CATEGORIES = [
  'process_creation',
  'file_event',
  'registry_set',
  'registry_add',
  'registry_delete',
  'registry_event',
  'image_load',
  'network_connection',
  'process_access',
  'dns_query',
  'pipe_created',
  'create_remote_thread',
  'driver_load',
];

export const ELASTIC_ECS: Pipeline = {
  name: 'elastic-ecs',
  description: 'Sigma Windows/Sysmon fields to Elastic Common Schema, logsources to data-stream index patterns',
  fields: ECS_FIELDS,
  logsources: [
    ...WINDOWS_CATEGORIES.map((category) => ({ category, product: 'windows', target: 'logs-windows.sysmon_operational-*', unmapped: 'keep' as const })),
    { product: 'windows', service: 'security', target: 'logs-system.security-*' },
    { product: 'windows', service: 'powershell', target: 'logs-windows.powershell_operational-*' },
    { product: 'windows', target: 'logs-windows.*' },
    { product: 'linux', target: 'logs-auditd.*,logs-system.*' },
    { product: 'aws', service: 'cloudtrail', target: 'logs-aws.cloudtrail-*' },
    { product: 'azure', target: 'logs-azure.*' },
  ],
  defaultTarget: 'logs-*',
  unmapped: 'keep',
};

export const SPLUNK_CIM: Pipeline = {
  name: 'splunk-cim',
  description: 'Sigma Windows/Sysmon fields to Splunk CIM names, logsources to CIM tag searches',
  fields: CIM_FIELDS,
  logsources: [
    { category: 'process_creation', product: 'windows', target: 'tag=process tag=report' },
    { category: 'network_connection', product: 'windows', target: 'tag=network tag=communicate' },
    { category: 'file_event', product: 'windows', target: 'tag=endpoint tag=filesystem' },
    { category: 'registry_set', product: 'windows', target: 'tag=endpoint tag=registry' },
    { category: 'registry_event', product: 'windows', target: 'tag=endpoint tag=registry' },
    { category: 'registry_add', product: 'windows', target: 'tag=endpoint tag=registry' },
    { category: 'registry_delete', product: 'windows', target: 'tag=endpoint tag=registry' },
    { product: 'windows', service: 'security', target: 'source="WinEventLog:Security"' },
    { product: 'windows', service: 'system', target: 'source="WinEventLog:System"' },
    { product: 'windows', target: 'sourcetype="XmlWinEventLog"', unmapped: 'keep' },
  ],
  defaultTarget: '',
  unmapped: 'keep',
};

/** Microsoft Defender XDR / Sentinel advanced-hunting tables; fields differ per table. */
const MDE_PROCESS = {
  Image: 'FolderPath',
  CommandLine: 'ProcessCommandLine',
  OriginalFileName: 'ProcessVersionInfoOriginalFileName',
  Description: 'ProcessVersionInfoFileDescription',
  Product: 'ProcessVersionInfoProductName',
  Company: 'ProcessVersionInfoCompanyName',
  ProcessId: 'ProcessId',
  IntegrityLevel: 'ProcessIntegrityLevel',
  User: 'AccountName',
  ParentImage: 'InitiatingProcessFolderPath',
  ParentCommandLine: 'InitiatingProcessCommandLine',
  ParentProcessId: 'InitiatingProcessId',
  Computer: 'DeviceName',
  sha256: 'SHA256',
  md5: 'MD5',
};
const MDE_INITIATING = {
  Image: 'InitiatingProcessFolderPath',
  CommandLine: 'InitiatingProcessCommandLine',
  ProcessId: 'InitiatingProcessId',
  User: 'InitiatingProcessAccountName',
  ParentImage: 'InitiatingProcessParentFileName',
  Computer: 'DeviceName',
};

export const SENTINEL: Pipeline = {
  name: 'sentinel',
  description: 'Sigma logsources to Microsoft Sentinel / Defender XDR tables with per-table field names',
  fields: {},
  logsources: [
    { category: 'process_creation', product: 'windows', target: 'DeviceProcessEvents', fields: MDE_PROCESS, unmapped: 'error' },
    { category: 'file_event', product: 'windows', target: 'DeviceFileEvents', fields: { ...MDE_INITIATING, TargetFilename: 'FolderPath' }, unmapped: 'error' },
    {
      category: 'registry_set',
      product: 'windows',
      target: 'DeviceRegistryEvents',
      fields: { ...MDE_INITIATING, TargetObject: 'RegistryKey', Details: 'RegistryValueData', EventType: 'ActionType' },
      unmapped: 'error',
    },
    {
      category: 'registry_event',
      product: 'windows',
      target: 'DeviceRegistryEvents',
      fields: { ...MDE_INITIATING, TargetObject: 'RegistryKey', Details: 'RegistryValueData', EventType: 'ActionType' },
      unmapped: 'error',
    },
    {
      category: 'registry_delete',
      product: 'windows',
      target: 'DeviceRegistryEvents',
      fields: { ...MDE_INITIATING, TargetObject: 'RegistryKey', EventType: 'ActionType' },
      unmapped: 'error',
    },
    {
      category: 'registry_add',
      product: 'windows',
      target: 'DeviceRegistryEvents',
      fields: { ...MDE_INITIATING, TargetObject: 'RegistryKey', EventType: 'ActionType' },
      unmapped: 'error',
    },
    { category: 'image_load', product: 'windows', target: 'DeviceImageLoadEvents', fields: { ...MDE_INITIATING, ImageLoaded: 'FolderPath' }, unmapped: 'error' },
    {
      category: 'network_connection',
      product: 'windows',
      target: 'DeviceNetworkEvents',
      fields: { ...MDE_INITIATING, DestinationIp: 'RemoteIP', DestinationPort: 'RemotePort', DestinationHostname: 'RemoteUrl', SourceIp: 'LocalIP', SourcePort: 'LocalPort' },
      unmapped: 'error',
    },
    { category: 'dns_query', product: 'windows', target: 'DnsEvents', fields: { QueryName: 'Name', Computer: 'Computer' }, unmapped: 'error' },
    { product: 'windows', service: 'security', target: 'SecurityEvent', unmapped: 'keep' },
    // Other Windows channels land in the generic Event table, whose event fields sit inside an XML
    // column, not in columns a Sigma field could name: they are deliberately left unmapped.
    { product: 'azure', service: 'signinlogs', target: 'SigninLogs', unmapped: 'keep' },
    { product: 'azure', service: 'auditlogs', target: 'AuditLogs', unmapped: 'keep' },
    { product: 'azure', service: 'activitylogs', target: 'AzureActivity', unmapped: 'keep' },
    { product: 'm365', target: 'OfficeActivity', unmapped: 'keep' },
    { product: 'aws', service: 'cloudtrail', target: 'AWSCloudTrail', unmapped: 'keep' },
  ],
  unmapped: 'error',
};

/**
 * Raw Windows event logs in Splunk (the Splunk Add-on for Microsoft Windows and for Sysmon, XML
 * rendering): the events keep their own field names, so Sigma's names are the data model and only
 * the source is chosen per logsource.
 */
export const SPLUNK_SYSMON: Pipeline = {
  name: 'splunk-sysmon',
  description: 'Sigma Windows/Sysmon logsources to the raw XmlWinEventLog sources of the Splunk Windows and Sysmon add-ons; field names kept',
  fields: {},
  logsources: [
    ...WINDOWS_CATEGORIES.map((category) => ({
      category,
      product: 'windows',
      target: 'source="XmlWinEventLog:Microsoft-Windows-Sysmon/Operational"',
      unmapped: 'keep' as const,
    })),
    { product: 'windows', service: 'sysmon', target: 'source="XmlWinEventLog:Microsoft-Windows-Sysmon/Operational"', unmapped: 'keep' },
    { product: 'windows', service: 'security', target: 'source="XmlWinEventLog:Security"', unmapped: 'keep' },
    { product: 'windows', service: 'system', target: 'source="XmlWinEventLog:System"', unmapped: 'keep' },
    { product: 'windows', service: 'application', target: 'source="XmlWinEventLog:Application"', unmapped: 'keep' },
    { product: 'windows', service: 'powershell', target: 'source="XmlWinEventLog:Microsoft-Windows-PowerShell/Operational"', unmapped: 'keep' },
    { product: 'windows', target: 'sourcetype="XmlWinEventLog"', unmapped: 'keep' },
  ],
  unmapped: 'error',
};

/** Actor (acting process) fields shared by the ASIM schemas whose subject is not the process itself. */
const ASIM_ACTING = {
  Image: 'ActingProcessName',
  CommandLine: 'ActingProcessCommandLine',
  ProcessId: 'ActingProcessId',
  ProcessGuid: 'ActingProcessGuid',
  User: 'ActorUsername',
  Computer: 'DvcHostname',
};
const ASIM_REGISTRY = { ...ASIM_ACTING, ParentImage: 'ParentProcessName', TargetObject: 'RegistryKey', Details: 'RegistryValueData', EventType: 'EventType' };

/**
 * Microsoft Sentinel's normalised ASIM schemas, through their unifying parsers (`imProcessCreate`,
 * `imFileEvent`, `imRegistry`, `imNetworkSession`, `imDns`): one table per kind of activity
 * whatever the source product. Field names from Microsoft's ASIM schema references; a field a
 * schema has no place for is refused rather than queried under its Sigma name.
 */
export const SENTINEL_ASIM: Pipeline = {
  name: 'sentinel-asim',
  description: 'Sigma Windows logsources to Microsoft Sentinel ASIM unifying parsers with ASIM field names',
  fields: {},
  logsources: [
    {
      category: 'process_creation',
      product: 'windows',
      target: 'imProcessCreate',
      fields: {
        Image: 'TargetProcessName',
        CommandLine: 'TargetProcessCommandLine',
        CurrentDirectory: 'TargetProcessCurrentDirectory',
        ProcessId: 'TargetProcessId',
        ProcessGuid: 'TargetProcessGuid',
        IntegrityLevel: 'TargetProcessIntegrityLevel',
        OriginalFileName: 'TargetProcessFileOriginalName',
        Description: 'TargetProcessFileDescription',
        Product: 'TargetProcessFileProduct',
        Company: 'TargetProcessFileCompany',
        FileVersion: 'TargetProcessFileVersion',
        User: 'TargetUsername',
        LogonId: 'TargetUserSessionId',
        ParentImage: 'ActingProcessName',
        ParentCommandLine: 'ActingProcessCommandLine',
        ParentProcessId: 'ActingProcessId',
        ParentProcessGuid: 'ActingProcessGuid',
        ParentUser: 'ActorUsername',
        Computer: 'DvcHostname',
      },
      unmapped: 'error',
    },
    {
      category: 'file_event',
      product: 'windows',
      target: 'imFileEvent',
      fields: { ...ASIM_ACTING, TargetFilename: 'TargetFilePath', CreationUtcTime: 'TargetFileCreationTime' },
      unmapped: 'error',
    },
    ...['registry_set', 'registry_event', 'registry_add', 'registry_delete'].map((category) => ({
      category,
      product: 'windows',
      target: 'imRegistry',
      fields: ASIM_REGISTRY,
      unmapped: 'error' as const,
    })),
    {
      category: 'network_connection',
      product: 'windows',
      target: 'imNetworkSession',
      fields: {
        Image: 'SrcProcessName',
        ProcessId: 'SrcProcessId',
        ProcessGuid: 'SrcProcessGuid',
        User: 'SrcUsername',
        SourceIp: 'SrcIpAddr',
        SourcePort: 'SrcPortNumber',
        SourceHostname: 'SrcHostname',
        DestinationIp: 'DstIpAddr',
        DestinationPort: 'DstPortNumber',
        DestinationHostname: 'DstHostname',
        Protocol: 'NetworkProtocol',
        Initiated: 'NetworkDirection',
        Computer: 'DvcHostname',
      },
      unmapped: 'error',
    },
    {
      category: 'dns_query',
      product: 'windows',
      target: 'imDns',
      fields: {
        QueryName: 'DnsQuery',
        QueryStatus: 'EventResultDetails',
        QueryResults: 'DnsResponseName',
        Image: 'SrcProcessName',
        ProcessId: 'SrcProcessId',
        User: 'SrcUsername',
        Computer: 'SrcHostname',
      },
      unmapped: 'error',
    },
  ],
  unmapped: 'error',
};

export const PIPELINES: Readonly<Record<string, Pipeline>> = {
  [ELASTIC_ECS.name]: ELASTIC_ECS,
  [SPLUNK_CIM.name]: SPLUNK_CIM,
  [SPLUNK_SYSMON.name]: SPLUNK_SYSMON,
  [SENTINEL.name]: SENTINEL,
  [SENTINEL_ASIM.name]: SENTINEL_ASIM,
};
