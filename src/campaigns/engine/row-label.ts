// How a log message names a contact: its place among the campaign's contacts and its line in the CSV. Row numbers on
// contacts, in log details and in the 422s' `loc` are the file's lines as a spreadsheet shows them (header = 1), so
// the last of 24 contacts is line 25; a bare "Row 25" read as a 25th contact, so messages say both.

export function contactLabel(contactId: number, row: number | null | undefined): string {
  return row == null ? `Contact ${contactId}` : `Contact ${contactId} (CSV line ${row})`;
}
