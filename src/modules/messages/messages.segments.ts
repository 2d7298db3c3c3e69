import { SegmentedMessage } from 'sms-segments-calculator';

/**
 * How many SMS parts a body is billed as: GSM-7 (160 characters, or 153 per part of a longer
 * text; the extension characters such as € count twice) or, with any other character, UCS-2
 * (70, or 67 per part). Counted by Twilio Labs' calculator, the rules Twilio bills by.
 */
export function segmentsOf(body: string): number {
  return new SegmentedMessage(body, 'auto').segmentsCount;
}
