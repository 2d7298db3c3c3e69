import { type Static, Type } from 'typebox';
import { StringEnum } from '../../platform/enum.js';
import { DateOnly, Envelope } from '../../platform/schemas.js';
import { JOB_STATUSES } from '../jobs/jobs.states.js';

const Amount = (description: string) => Type.Number({ description: `${description} (decimal, two places at most)` });
const Count = (description: string) => Type.Integer({ minimum: 0, description });

export const DashboardQuery = Type.Object(
  {
    from: Type.Optional(
      DateOnly('First day of the range (default: the first day of this month, organization timezone)'),
    ),
    to: Type.Optional(
      DateOnly('Last day of the range, included (default: the last day of this month); before from → 400'),
    ),
  },
  { additionalProperties: false },
);
export type DashboardQueryT = Static<typeof DashboardQuery>;

export const Dashboard = Type.Object(
  {
    revenue: Type.Object({
      invoiced: Amount('Σ total of non-draft, non-void invoices whose invoiceDate is in range'),
      collected: Amount('Σ payments whose paymentDate is in range, less refunds made in range'),
    }),
    receivables: Type.Object({
      outstanding: Amount('Σ balance of sent, partially_paid and overdue invoices, now'),
      overdueAmount: Amount('Σ balance of those due before today (whether or not the sweep has run)'),
      overdueCount: Count('How many of them are due before today'),
      aging: Type.Object({
        current: Amount('Balance not yet due'),
        days1to30: Amount('Balance 1–30 days past dueDate'),
        days31to60: Amount('Balance 31–60 days past dueDate'),
        days61to90: Amount('Balance 61–90 days past dueDate'),
        over90: Amount('Balance more than 90 days past dueDate'),
      }),
    }),
    payables: Type.Object({
      outstanding: Amount('Σ balance of open and partially_paid bills, now'),
      dueNext7Days: Amount('Σ balance of those due on or before today + 7 (overdue included)'),
    }),
    jobs: Type.Object({
      scheduledToday: Count("Jobs on today's date (drafts and canceled jobs left out)"),
      inProgress: Count('Jobs in_progress now'),
      completed: Count('Jobs completed in range'),
      byStatus: Type.Object(
        Object.fromEntries(JOB_STATUSES.map((s) => [s, Count(`Jobs scheduled in range that are ${s}`)])) as Record<
          (typeof JOB_STATUSES)[number],
          ReturnType<typeof Count>
        >,
        { description: 'Jobs scheduled in range, per status; every status is a key (0 included)' },
      ),
    }),
    estimates: Type.Object({
      sent: Count('Estimates first sent in range'),
      approved: Count('Of those, how many are approved or converted'),
      conversionRate: Type.Number({
        minimum: 0,
        maximum: 1,
        description: 'approved ÷ sent, a fraction (0 when none sent)',
      }),
    }),
    contracts: Type.Object({
      active: Count('Contracts active now'),
      activeRevenue: Amount('Σ totalValue of the contracts active now (as in contract analytics)'),
    }),
    crew: Type.Object({
      workHours: Type.Number({ description: 'Hours of closed work entries starting in range, 2 decimals' }),
      driveHours: Type.Number({ description: 'Hours of closed drive entries starting in range, 2 decimals' }),
    }),
    winter: Type.Object({
      storms: Count('Storms started in range (by startedAt)'),
      visitsServiced: Count('Route visits serviced in range (by servicedAt)'),
    }),
  },
  { additionalProperties: false },
);
export type DashboardT = Static<typeof Dashboard>;
export const DashboardResponse = Envelope(Dashboard);

export const INTERVALS = ['day', 'week', 'month'] as const;
export type Interval = (typeof INTERVALS)[number];

export const RevenueQuery = Type.Object(
  {
    interval: Type.Optional(StringEnum(INTERVALS, 'day | week (starting Monday) | month (default)')),
    from: Type.Optional(
      DateOnly('First day of the range (default: the first day of the month 11 months ago, organization timezone)'),
    ),
    to: Type.Optional(DateOnly('Last day of the range, included (default: today); before from → 400')),
  },
  { additionalProperties: false },
);
export type RevenueQueryT = Static<typeof RevenueQuery>;

export const RevenuePeriod = Type.Object(
  {
    period: DateOnly('The first day of the period (a Monday for weeks, the 1st for months)'),
    invoiced: Amount('Σ total of non-draft, non-void invoices dated in the period (and in range)'),
    collected: Amount('Σ payments dated in the period, less refunds made in it'),
  },
  { additionalProperties: false },
);
export const RevenueResponse = Envelope(Type.Array(RevenuePeriod));
